// Package peakrss runs a process and reports its own peak resident set
// size, which the rusage of a process started from Go does not give.
//
// Go starts a child with vfork: until its exec the child runs in the
// parent's memory, and at the exec the kernel records that memory's peak
// as the child's. ru_maxrss is then never below the parent's resident
// set: a 2 MiB program started from a 30 MiB test binary "peaks" at
// 30 MiB. Run instead stops the child at its exit (ptrace's exit event),
// while its memory is still there, and reads VmHWM from /proc.
package peakrss

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Result is what Run measured.
type Result struct {
	// PeakBytes is the process's own peak resident set (VmHWM).
	PeakBytes int64
	Status    syscall.WaitStatus
	Rusage    syscall.Rusage
}

// MiB is PeakBytes in MiB.
func (r Result) MiB() float64 { return float64(r.PeakBytes) / (1 << 20) }

// Run starts cmd, waits for it and measures its peak. cmd's standard
// streams must be nil or *os.File: no goroutine of this process may copy
// them, since Run waits for the process itself (cmd.Wait is not called).
// The stops at the child's signals wait for this process, so a run's
// timing is not a start's: measure time in a run without Run.
func Run(cmd *exec.Cmd) (Result, error) {
	for _, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if _, ok := s.(*os.File); s != nil && !ok {
			return Result{}, errors.New("peakrss: the standard streams must be files")
		}
	}
	// ptrace's requests must come from the thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Release()
	var res Result
	// The child stops after its exec: ask to see its exit too.
	if _, err := syscall.Wait4(pid, &res.Status, 0, nil); err != nil {
		return res, err
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
		cmd.Process.Kill()
		return res, fmt.Errorf("ptrace: %w", err)
	}
	sig, peak := 0, int64(-1)
	for {
		if err := syscall.PtraceCont(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return res, fmt.Errorf("ptrace: %w", err)
		}
		if _, err := syscall.Wait4(pid, &res.Status, 0, &res.Rusage); err != nil {
			return res, err
		}
		ws := res.Status
		if ws.Exited() || ws.Signaled() {
			break
		}
		sig = 0
		switch {
		case ws.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			peak = vmHWM(pid)
		case ws.StopSignal() != syscall.SIGTRAP:
			sig = int(ws.StopSignal()) // a signal for the child: pass it on
		}
	}
	if peak < 0 {
		return res, errors.New("peakrss: the process left without an exit event")
	}
	res.PeakBytes = peak
	return res, nil
}

// vmHWM is the VmHWM of process pid, in bytes, or -1.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}
