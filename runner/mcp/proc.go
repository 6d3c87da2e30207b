package mcp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/awlrun/awl/runner/tool"
	"github.com/tidwall/gjson"
)

// terminateAfter is how long a stdio server has to exit once its stdin is
// closed, and then once it got SIGTERM, before it is killed.
const terminateAfter = 2 * time.Second

// proc is a running stdio server process.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *jsonLines
	errw   *lineWriter
	exited chan struct{}
	once   sync.Once
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
	p.stdout = &jsonLines{r: r, br: bufio.NewReaderSize(r, 64<<10),
		note: &lineWriter{prefix: "mcp " + s.cfg.Name + " (stdout, not JSON-RPC): ", w: s.m.stderr},
		warn: &lineWriter{prefix: "mcp " + s.cfg.Name + ": ", w: s.m.stderr}}
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
		p.stdout.note.Flush()
		p.stdout.warn.Flush()
	})
}

// jsonLines reads a server's stdout and passes on only its JSON-RPC
// messages: lines that are JSON objects with a "jsonrpc" member (or arrays
// of them). Other lines, a banner or a JSON log line such as pino's
// {"level":30,…}, go to note. A line is held whole before it is judged, up
// to maxMessage bytes; a longer one is scanned as it is read (bigMessage)
// and replaced by a short message, which warn says.
type jsonLines struct {
	r    io.Closer
	br   *bufio.Reader
	note *lineWriter
	warn *lineWriter
	mu   sync.Mutex
	// pending is the rest of a line being passed on.
	pending []byte
	line    []byte
	big     *bigMessage
}

func (j *jsonLines) Read(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for len(j.pending) == 0 {
		chunk, err := j.br.ReadSlice('\n')
		if j.big != nil {
			j.big.Write(chunk)
		} else {
			j.line = append(j.line, chunk...)
			if len(j.line) > maxMessage {
				j.big = &bigMessage{}
				j.big.Write(j.line)
				j.line = nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if j.big != nil {
			msg, say := j.big.replacement()
			j.big = nil
			j.warn.Write([]byte(say + "\n"))
			if msg != nil {
				j.pending = append(append(j.pending[:0], msg...), '\n')
			}
		} else if len(j.line) > 0 {
			if isJSONRPC(j.line) {
				j.pending = append(j.pending[:0], j.line...)
			} else if len(bytes.TrimSpace(j.line)) > 0 {
				j.note.Write(j.line)
				if j.line[len(j.line)-1] != '\n' {
					j.note.Write([]byte("\n"))
				}
			}
			j.line = j.line[:0]
		}
		if err != nil && len(j.pending) == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// isJSONRPC reports whether line is a JSON-RPC message: a JSON object with
// a "jsonrpc" member, or an array whose first element is one.
func isJSONRPC(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || !gjson.ValidBytes(t) {
		return false
	}
	switch t[0] {
	case '{':
		return gjson.GetBytes(t, "jsonrpc").Exists()
	case '[':
		return gjson.GetBytes(t, "0.jsonrpc").Exists()
	}
	return false
}

func (j *jsonLines) Close() error { return j.r.Close() }
