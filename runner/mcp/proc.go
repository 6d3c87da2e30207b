package mcp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/awlrun/awl/runner/mcp/jsonrpc"
	"github.com/awlrun/awl/runner/tool"
)

// terminateAfter is how long a stdio server has to exit once its stdin is
// closed, and then once it got SIGTERM, before it is killed.
const terminateAfter = 2 * time.Second

// proc is a running stdio server process.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *jsonrpc.Lines
	// errw, note and warn are its stderr, its stdout's lines that are
	// not JSON-RPC, and awl's word about a line too long to pass on.
	errw, note, warn *lineWriter
	exited           chan struct{}
	once             sync.Once
}

// startProc starts the stdio server: the tool environment plus the config's
// env, stderr to awl's stderr line by line, in its own process group so
// that whatever it starts is stopped with it. Lines on its stdout that are
// not JSON (a banner printed by mistake) go to stderr too, instead of
// breaking the connection.
func (s *server) startProc() (*proc, error) {
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.m.opts.Dir
	if s.cfg.Cwd != "" {
		cmd.Dir = s.cfg.Cwd
	}
	env := slices.Clone(s.m.opts.Environ)
	keys := make([]string, 0, len(s.cfg.Env))
	for k := range s.cfg.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.cfg.Env[k])
	}
	cmd.Env = env
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	p.errw = &lineWriter{prefix: "mcp " + s.cfg.Name + ": ", w: s.m.stderr}
	cmd.Stderr = p.errw
	// A grandchild that keeps stderr open must not hold up Wait.
	cmd.WaitDelay = terminateAfter
	isolate(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	if err := s.startConfined(cmd); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start %s: %w", s.cfg.Command, err)
	}
	w.Close()
	// Its process group is its pid (isolate): the tools' reaper kills it
	// if awl ends without stopping it, SIGKILLed or exiting at once at the
	// end of a signal's grace period. The parent-death signal alone would
	// kill the server and leave what it started running.
	tool.TrackGroup(cmd.Process.Pid, true)
	p.stdin = stdin
	p.note = &lineWriter{prefix: "mcp " + s.cfg.Name + " (stdout, not JSON-RPC): ", w: s.m.stderr}
	p.warn = &lineWriter{prefix: "mcp " + s.cfg.Name + ": ", w: s.m.stderr}
	p.stdout = jsonrpc.NewLines(r, p.note, p.warn)
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// startConfined starts the server's process, confined as its config and the run's
// sandbox say.
func (s *server) startConfined(cmd *exec.Cmd) error {
	confine := s.m.opts.Confine
	switch s.cfg.Sandbox {
	case SandboxOff:
		confine = nil
	case SandboxNetwork:
		confine = s.m.opts.ConfineNetwork
	}
	if confine == nil {
		return cmd.Start()
	}
	return confine.Start(cmd)
}

// exitedEarly says how a server that stopped before its tools were listed
// ended: its exit status and the last lines of its stderr, "" when it is
// still running after a moment. A failed write to its stdin ("file already
// closed") or its stdout's end says only that it is gone.
func (p *proc) exitedEarly() string {
	select {
	case <-p.exited:
	case <-time.After(time.Second):
		return ""
	}
	p.errw.Flush()
	msg := "the server exited before its tools were listed (" + p.cmd.ProcessState.String() + ")"
	if t := p.errw.tail(); t != "" {
		msg += "; its stderr ended: " + t
	} else {
		msg += "; it wrote nothing to stderr"
	}
	return msg
}

// stop closes the server's stdin and waits for it to exit; after
// terminateAfter it sends SIGTERM to its process group, and after as long
// again SIGKILL. Whatever the group still holds is killed.
func (p *proc) stop() {
	p.once.Do(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(terminateAfter):
			terminateGroup(p.cmd.Process)
			select {
			case <-p.exited:
			case <-time.After(terminateAfter):
			}
		}
		killGroup(p.cmd.Process)
		<-p.exited
		tool.TrackGroup(p.cmd.Process.Pid, false)
		p.stdout.Close()
		p.errw.Flush()
		p.note.Flush()
		p.warn.Flush()
	})
}
