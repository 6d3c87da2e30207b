// Package watchdog starts a shell script that outlives awl's death by
// SIGKILL and acts on it: the script reads its standard input from a pipe
// whose write end only awl holds, so end of input means awl is gone,
// however it went. The sandbox's cgroup and the tools' process-group
// reaper each use one.
package watchdog

import (
	"os"
	"os/exec"
	"syscall"
)

// Start runs `sh -c script arg0 args...` in a session of its own, so that
// a signal to awl's process group spares it, with "/" as its directory
// and only PATH in its environment, and returns the write end of its
// standard input. Writing to it talks to the script; closing it, or
// awl's death, ends its input. The script is reaped in the background.
func Start(script, arg0 string, args ...string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sh", append([]string{"-c", script, arg0}, args...)...)
	cmd.Stdin = r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	go cmd.Wait()
	return w, nil
}
