package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/provider/providertest"
	"github.com/awlrun/awl/runner/sandbox"
	"golang.org/x/sys/unix"
)

// children lists the pids of pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// inSession lists the live processes whose session id is sid.
func inSession(sid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:])) // f[0] is field 3, state
		if len(f) > 3 && f[3] == strconv.Itoa(sid) && f[0] != "Z" {
			pid, _ := strconv.Atoi(strings.Split(s, "/")[2])
			out = append(out, pid)
		}
	}
	return out
}

// TestToolDiesWithAwl: after a SIGKILL of awl during `bash sleep 30`, no
// process of the tool survives: not the command bash execs, and not what
// bash forks.
func TestToolDiesWithAwl(t *testing.T) {
	for _, c := range []struct {
		command string
		sleeps  int
		args    []string
	}{
		{"sleep 30", 1, nil},
		{"sleep 30 & sleep 31 | cat; wait", 2, nil},
		// A confined command is started from a thread of its own.
		{"sleep 30 & sleep 31 | cat; wait", 2, []string{"--sandbox", "workspace-write"}},
	} {
		t.Run(strings.Join(append([]string{c.command}, c.args...), " "), func(t *testing.T) {
			if abi := sandbox.ABI(); c.args != nil && abi < sandbox.ABINetwork {
				testenv.Require(t, fmt.Sprintf("this kernel's Landlock ABI is %d; the test needs %d", abi, sandbox.ABINetwork))
			}
			testToolDiesWithAwl(t, c.command, c.sleeps, c.args...)
		})
	}
}

// sleepsIn counts the sleep processes among pids.
func sleepsIn(pids []int) int {
	n := 0
	for _, p := range pids {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm"); string(comm) == "sleep\n" {
			n++
		}
	}
	return n
}

func testToolDiesWithAwl(t *testing.T, command string, sleeps int, args ...string) {
	tmp, awl := linkedAwl(t)
	srv := providertest.New()
	defer srv.Close()
	input, _ := json.Marshal(map[string]string{"command": command})
	srv.Enqueue(providertest.ToolCall("anthropic", "c1", "bash", string(input)), providertest.Text("anthropic", "done"))
	cmd := exec.Command(awl, append(append([]string{"run", "--no-stdin"}, args...), "go")...)
	cmd.Dir = tmp
	cmd.Env = awlEnv(tmp, srv.URL, filepath.Join(tmp, "sessions"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The tool runs in its own session, whose id is the pid of the
	// process awl started.
	tool := 0
	for deadline := time.Now().Add(60 * time.Second); tool == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the tool never started")
		}
		for _, c := range children(cmd.Process.Pid) {
			if sleepsIn(inSession(c)) == sleeps {
				tool = c
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var left []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left = inSession(tool); len(left) == 0 {
			return
		}
	}
	for _, p := range left {
		syscall.Kill(p, syscall.SIGKILL)
	}
	t.Fatalf("tool processes %v survived a SIGKILL of awl", left)
}

// TestResumeRightAfterKill: SIGKILL awl while its tool (`bash sleep`)
// runs; once the kernel has torn the killed awl down (a zombie, not yet
// reaped: nothing has waited for it), nothing holds the session: no
// process has the file open, /proc/locks has no lock on it, and a resume
// takes it at once. Two rounds, each killing a run of the same session.
//
// It used to resume "at once" after the kill, which hit the few
// milliseconds in which the dying awl still held its lock only now and
// then: a lottery. The moment is deterministic here, and the window itself
// (a lock whose holder is gone, exiting or a zombie is waited for, not
// refused) is session's TestLockOfAGoneHolder and TestHolderGoneZombie,
// both without a race.
func TestResumeRightAfterKill(t *testing.T) {
	tmp, awl := linkedAwl(t)
	srv := providertest.New()
	defer srv.Close()
	env := awlEnv(tmp, srv.URL, filepath.Join(tmp, "sessions"))
	path := ""
	for round := range 2 {
		srv.Enqueue(providertest.ToolCall("anthropic", fmt.Sprintf("c%d", round), "bash", `{"command":"sleep 30"}`))
		args := []string{"run", "--no-stdin", "go"}
		if path != "" {
			args = []string{"run", "--no-stdin", "--resume", path, "go on"}
		}
		cmd := exec.Command(awl, args...)
		cmd.Dir, cmd.Env = tmp, env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The moment of the kill: the tool runs, and so does the reaper
		// awl forks right after starting it (runner/tool's reaper), as sh.
		// Killed earlier, a child forked but not yet exec'd still holds
		// awl's files, the session's locked one among them, until its exec
		// closes them: under load that took long enough for the check
		// below to see it.
		tool := 0
		for deadline := time.Now().Add(2 * time.Minute); tool == 0 || !settled(awl, cmd.Process.Pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("round %d: the tool (%d) and the reaper never both ran; awl's children: %v", round, tool, childCmdlines(cmd.Process.Pid))
			}
			for _, c := range children(cmd.Process.Pid) {
				if sleepsIn(inSession(c)) == 1 {
					tool = c
				}
			}
		}
		paths, _ := filepath.Glob(filepath.Join(tmp, "sessions", "*", "*.jsonl"))
		if len(paths) != 1 {
			cmd.Process.Kill()
			t.Fatalf("round %d: session files %q, want one", round, paths)
		}
		path = paths[0]
		tools := inSession(tool)
		if lockedInode(t, path) == "" {
			cmd.Process.Kill()
			t.Fatalf("round %d: /proc/locks shows no lock on the session of a running awl: the check below proves nothing", round)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		// Torn down, not reaped: every file of the killed awl is closed.
		for deadline := time.Now().Add(2 * time.Minute); !isZombie(cmd.Process.Pid); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the killed awl %d never became a zombie", round, cmd.Process.Pid)
			}
		}
		for _, p := range append(tools, cmd.Process.Pid) {
			fds, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/fd/*")
			for _, fd := range fds {
				if to, _ := os.Readlink(fd); to == path {
					t.Errorf("round %d: process %d holds the session file open as %s", round, p, fd)
				}
			}
		}
		if held := lockedInode(t, path); held != "" {
			all, _ := filepath.Glob("/proc/[0-9]*/fd/*")
			var who []string
			for _, fd := range all {
				if to, _ := os.Readlink(fd); to == path {
					cm, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(fd)), "cmdline"))
					who = append(who, fd+" "+strings.ReplaceAll(string(cm), "\x00", " "))
				}
			}
			t.Errorf("round %d: the session is still locked after its awl %d died: %s; open in %q; tools %v", round, cmd.Process.Pid, held, who, tools)
		}
		srv.Enqueue(providertest.Text("anthropic", "resumed"))
		r := exec.Command(awl, "run", "--no-stdin", "--resume", path, "again")
		r.Dir, r.Env = tmp, env
		out, err := r.CombinedOutput()
		cmd.Wait()
		if err != nil {
			t.Fatalf("round %d: resume right after a SIGKILL: %v\n%s", round, err, out)
		}
		if !strings.Contains(string(out), "resumed") {
			t.Fatalf("round %d: resume answered %q", round, out)
		}
	}
}

// childCmdlines returns the command lines of pid's children, NULs as
// spaces.
func childCmdlines(pid int) []string {
	var out []string
	for _, c := range children(pid) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(c) + "/cmdline")
		out = append(out, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "))
	}
	return out
}

// settled reports whether the awl process pid (started as the program
// awl) runs its reaper and has no child between fork and exec: such a
// child still has awl's command line, and holds awl's files.
func settled(awl string, pid int) bool {
	reaper := false
	for _, line := range childCmdlines(pid) {
		argv0, _, _ := strings.Cut(line, " ")
		if argv0 == awl {
			return false
		}
		if strings.HasPrefix(line, "sh -c ") && strings.HasSuffix(line, " awl-reaper") {
			reaper = true
		}
	}
	return reaper
}

// isZombie reports whether pid is a zombie: exited, every thread of it
// too (the main thread shows Z while the others still exit, holding the
// files), not yet waited for.
func isZombie(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	b, _ := os.ReadFile(dir + "/stat")
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || !strings.HasPrefix(string(b[i+1:]), " Z") {
		return false
	}
	tasks, _ := os.ReadDir(dir + "/task")
	return len(tasks) == 1
}

// lockedInode returns the /proc/locks line of a lock on path's file, ""
// when there is none.
func lockedInode(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		testenv.Require(t, "no /proc/locks: "+err.Error())
	}
	dev := uint64(st.Dev)
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), st.Ino)
	for line := range strings.SplitSeq(string(locks), "\n") {
		// "1: FLOCK  ADVISORY  WRITE 12345 fe:00:9978424 0 EOF"
		if f := strings.Fields(line); len(f) >= 6 && f[5] == want {
			return line
		}
	}
	return ""
}
