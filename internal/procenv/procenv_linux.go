package procenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Hide overwrites, in place, the value of every variable in names in the
// environment block the process started with, with NUL bytes, and then
// marks the process non-dumpable. /proc/self/environ then shows NAME=
// followed by empty strings; every other variable keeps its bytes and
// place, so a C library that still points into the block reads the others
// unchanged.
//
// The block is rewritten first because a non-dumpable process's /proc/self
// files belong to root: a process without CAP_DAC_OVERRIDE can no longer
// open its own /proc/self/mem once it gave up dumpability.
//
// Go copied the environment at start, so os.Getenv still returns the
// values, and children started with os.Environ still get them: callers pass
// tools an environment without them. An error means the block could not be
// changed (no /proc); the process is made non-dumpable regardless.
func Hide(names []string) error {
	err := blankEnviron(names)
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		return errors.Join(err, fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", e))
	}
	return err
}

// blankEnviron blanks the values of names in the environment block.
func blankEnviron(names []string) error {
	if len(names) == 0 {
		return nil
	}
	mem := &selfMem{}
	defer mem.Close()
	block, start, ok := startBlock(mem)
	if !ok {
		s, end, err := envBounds()
		if err != nil {
			return err
		}
		start, block = s, make([]byte, end-s)
		if _, err := mem.ReadAt(block, start); err != nil {
			return fmt.Errorf("read environment block: %w", err)
		}
	}
	if !blank(block, names) {
		return nil
	}
	if _, err := mem.WriteAt(block, start); err != nil {
		return fmt.Errorf("write environment block: %w", err)
	}
	return nil
}

// useProcessVM is false in a test of the /proc/self/mem way.
var useProcessVM = true

// selfMem reads and writes this process's own memory with
// process_vm_readv and process_vm_writev: a system call each, where
// opening /proc/self/mem (a procfs lookup), reading, writing and closing it
// took 0.2-0.4 ms at a start. Where those calls are refused (a seccomp
// filter, a kernel without them) it falls back to /proc/self/mem.
type selfMem struct{ f *os.File }

func (m *selfMem) ReadAt(b []byte, addr int64) (int, error) {
	return m.rw(b, addr, false)
}

func (m *selfMem) WriteAt(b []byte, addr int64) (int, error) {
	return m.rw(b, addr, true)
}

func (m *selfMem) rw(b []byte, addr int64, write bool) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if m.f == nil && useProcessVM {
		local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
		rw := unix.ProcessVMReadv
		if write {
			rw = unix.ProcessVMWritev
		}
		if n, err := rw(os.Getpid(), local, remote, 0); err == nil && n == len(b) {
			return n, nil
		}
	}
	if m.f == nil {
		f, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
		if err != nil {
			return 0, err
		}
		m.f = f
	}
	if write {
		return m.f.WriteAt(b, addr)
	}
	return m.f.ReadAt(b, addr)
}

// Close closes /proc/self/mem if it was opened.
func (m *selfMem) Close() {
	if m.f != nil {
		m.f.Close()
	}
}

// startBlock reads the environment block where it lies when the process
// has not changed its environment, without /proc/self/stat (which the
// kernel builds from some fifty fields: about a tenth of a millisecond or
// more at a start, against a few microseconds for the auxiliary vector).
// The kernel copies the path it executed (AT_EXECFN) right after the
// environment's strings, so the block ends at that address and is as long
// as os.Environ's strings with their NULs. It returns the block and its
// address only when the bytes there are exactly those strings; anything
// else (a variable set or unset since the start, a kernel that lays the
// stack out otherwise, no AT_EXECFN) returns false, and envBounds says
// where the block is.
func startBlock(mem *selfMem) ([]byte, int64, bool) {
	auxv, err := unix.Auxv()
	if err != nil {
		return nil, 0, false
	}
	var end uintptr
	for _, kv := range auxv {
		if kv[0] == atExecFn {
			end = kv[1]
		}
	}
	env := os.Environ()
	n := 0
	for _, kv := range env {
		n += len(kv) + 1
	}
	if end == 0 || n == 0 || uintptr(n) > end {
		return nil, 0, false
	}
	start := int64(end) - int64(n)
	block := make([]byte, n)
	if _, err := mem.ReadAt(block, start); err != nil {
		return nil, 0, false
	}
	rest := block
	for _, kv := range env {
		if len(rest) <= len(kv) || string(rest[:len(kv)]) != kv || rest[len(kv)] != 0 {
			return nil, 0, false
		}
		rest = rest[len(kv)+1:]
	}
	return block, start, true
}

// atExecFn is AT_EXECFN, the auxiliary vector's entry for the address of
// the executed path.
const atExecFn = 31

// blank overwrites the values of the named variables in block (NAME=VALUE
// strings, each ended by NUL) with NULs and reports whether it changed
// anything.
func blank(block []byte, names []string) bool {
	changed := false
	for rest, off := block, 0; len(rest) > 0; {
		n := bytes.IndexByte(rest, 0)
		if n < 0 {
			n = len(rest)
		}
		kv := rest[:n]
		if eq := bytes.IndexByte(kv, '='); eq > 0 {
			for _, name := range names {
				if string(kv[:eq]) == name {
					clear(block[off+eq+1 : off+n])
					changed = changed || eq+1 < n
					break
				}
			}
		}
		off += n + 1
		rest = block[min(off, len(block)):]
	}
	return changed
}

// envBounds returns where the environment block lies in this process's
// memory: fields 50 and 51 (env_start, env_end) of /proc/self/stat.
func envBounds() (start, end int64, err error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// Field 2, the command name, is in parentheses and may hold spaces
	// or parentheses itself: count fields after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("/proc/self/stat: no command name")
	}
	fields := strings.Fields(string(stat[i+1:]))
	const first = 3 // fields[0] is field 3
	if len(fields) < 51-first+1 {
		return 0, 0, errors.New("/proc/self/stat: no env_start/env_end (kernel before 3.5)")
	}
	start, err1 := strconv.ParseInt(fields[50-first], 10, 64)
	end, err2 := strconv.ParseInt(fields[51-first], 10, 64)
	if err := errors.Join(err1, err2); err != nil || start <= 0 || end < start {
		return 0, 0, fmt.Errorf("/proc/self/stat: bad env_start/env_end %q %q", fields[50-first], fields[51-first])
	}
	return start, end, nil
}
