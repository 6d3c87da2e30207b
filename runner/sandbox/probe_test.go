//go:build linux

package sandbox_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

// The test binary is also the probe a confined command runs: with
// AWL_PROBE=WHAT:ARG set it tries one way out and prints "probe ok" or
// "probe failed: REASON", then exits. It needs no python3 on the machine.
func TestMain(m *testing.M) {
	if p := os.Getenv("AWL_PROBE"); p != "" {
		what, arg, _ := strings.Cut(p, ":")
		if what == "hold" {
			hold(arg, os.Getenv("AWL_PROBE_CMD"))
			return
		}
		if what == "confine" {
			confine(arg, os.Getenv("AWL_PROBE_CMD"))
			return
		}
		if what == "refuse" {
			err := refuseCalls(arg, os.Args[1:])
			fmt.Println("probe failed:", err)
			os.Exit(1)
		}
		if err := probe(what, arg); err != nil {
			fmt.Println("probe failed:", err)
			os.Exit(1)
		}
		fmt.Println("probe ok")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probe tries one escape: what is udp, fastopen, raw or listen (port is
// arg), abstract (the abstract UNIX socket name is arg), or remount (a
// read-only directory is arg).
func probe(what, arg string) error {
	port, _ := strconv.Atoi(arg)
	to := &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	payload := []byte("awl-probe")
	switch what {
	case "udp":
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		return syscall.Sendto(fd, payload, 0, to)
	case "fastopen":
		// Fast Open connects inside sendto, without connect().
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		if err := syscall.Sendto(fd, payload, syscall.MSG_FASTOPEN, to); err != nil {
			return fmt.Errorf("sendto MSG_FASTOPEN: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
		return nil
	case "raw":
		// A UDP datagram built by hand on a raw socket (root).
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_UDP)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		pkt := make([]byte, 8, 8+len(payload))
		binary.BigEndian.PutUint16(pkt[0:], 40000)
		binary.BigEndian.PutUint16(pkt[2:], uint16(port))
		binary.BigEndian.PutUint16(pkt[4:], uint16(8+len(payload)))
		pkt = append(pkt, payload...)
		return syscall.Sendto(fd, pkt, 0, to)
	case "listen":
		// listen() without bind(): the kernel picks a port itself.
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		if err := syscall.Listen(fd, 1); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			return err
		}
		fmt.Println("listening on port", sa.(*syscall.SockaddrInet4).Port)
		return nil
	case "remount":
		// The mount system calls themselves, not mount(8), which refuses
		// a user who is not root before asking the kernel: make the
		// read-only directory arg writable again, or take it away, then
		// write in it.
		var errs []string
		if err := unix.Mount("", arg, "", unix.MS_REMOUNT|unix.MS_BIND, ""); err != nil {
			errs = append(errs, "remount: "+err.Error())
		}
		if err := unix.Unmount(arg, unix.MNT_DETACH); err != nil {
			errs = append(errs, "umount: "+err.Error())
		}
		if err := os.WriteFile(filepath.Join(arg, "config"), payload, 0o644); err != nil {
			return fmt.Errorf("%s; write: %w", strings.Join(errs, "; "), err)
		}
		return nil
	case "sys", "bpf", "perf", "userfaultfd", "handle", "ptrace", "keyread", "newuser", "caps", "nsfds":
		return privProbe(what, arg)
	case "abstract":
		c, err := net.Dial("unix", "@"+arg)
		if err != nil {
			return err
		}
		return c.Close()
	}
	return fmt.Errorf("unknown probe %q", what)
}

// hold is an awl in miniature, for the tests that kill one: it makes a
// workspace-write sandbox for cwd, runs command with the bash tool, prints
// the sandbox's private temporary directory, whether processes are
// enforced, and "ready", and sleeps until it is killed. With
// AWL_PROBE_NO_NAMESPACES set, it does without namespaces (a user who is
// not root where user namespaces are unavailable).
func hold(cwd, command string) {
	if os.Getenv("AWL_PROBE_NO_NAMESPACES") != "" {
		sandbox.WithoutUserNamespaces()
	}
	sb, st, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: cwd})
	if err != nil {
		fmt.Println("hold:", err)
		os.Exit(1)
	}
	bash := tool.Builtins(tool.Env{Dir: cwd, Confine: sb})[0]
	in, _ := json.Marshal(map[string]any{"command": command})
	res := bash.Run(context.Background(), in)
	fmt.Printf("%s\ntmp %s\nprocesses %v\nready\n", res.Content, sb.TmpDir, st.Enforced.Processes)
	time.Sleep(time.Minute)
	os.Exit(0)
}

// probeCommand is the bash command that runs probe what with arg.
func probeCommand(t *testing.T, what, arg string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("AWL_PROBE=%s:%s %q", what, arg, exe)
}
