package sandbox_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/sandbox"
)

// The Landlock ABIs that restrict connecting to pathname UNIX sockets and
// UDP, as docs/security.md says.
const (
	abiUnixSockets = 9
	abiUDP         = 10
)

// haveABI skips t, saying so, on a kernel without the ABI a rule needs:
// these rules are newer than most kernels CI runs on, so even in CI the
// test skips rather than fails there (requireABI covers what CI must run).
func haveABI(t *testing.T, need int, what string) {
	t.Helper()
	if abi := sandbox.ABI(); abi < need {
		t.Skipf("this kernel's Landlock ABI is %d; %s needs ABI %d, so it is not tested here", abi, what, need)
	}
}

// TestUnixSocketOutsideIsDenied: with the network off, a confined command
// cannot connect to a pathname UNIX socket made outside the sandbox (a
// Docker or SSH agent socket); --sandbox-network lets it.
func TestUnixSocketOutsideIsDenied(t *testing.T) {
	haveABI(t, abiUnixSockets, "restricting pathname UNIX sockets")
	testenv.RequireCommands(t, "python3")
	path := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	connect := fmt.Sprintf(`python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")' %q`, path)

	off := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	mustDenied(t, off.bash(t, connect), off.sb.Note(), "Permission denied")
	select {
	case <-accepted:
		t.Fatal("a confined command reached the UNIX socket with the network off")
	default:
	}

	on := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: true})
	res := on.bash(t, connect)
	mustOK(t, res)
	if !strings.Contains(res.Content, "connected") {
		t.Errorf("no connection with the network on:\n%s", res.Content)
	}
	<-accepted
}

// TestUDPIsDenied: with the network off, a confined command cannot send a
// UDP datagram (nor so a DNS query); --sandbox-network lets it.
func TestUDPIsDenied(t *testing.T) {
	haveABI(t, abiUDP, "restricting UDP")
	testenv.RequireCommands(t, "python3")
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	send := fmt.Sprintf(`python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"ping", ("127.0.0.1", %d)); print("sent")'`, port)
	received := func() bool {
		pc.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 16)
		n, _, err := pc.ReadFrom(buf)
		return err == nil && string(buf[:n]) == "ping"
	}

	off := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	mustDenied(t, off.bash(t, send), off.sb.Note(), "Permission denied")
	if received() {
		t.Fatal("a confined command sent a UDP datagram with the network off")
	}

	on := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: true})
	res := on.bash(t, send)
	mustOK(t, res)
	if !received() {
		t.Errorf("no datagram arrived with the network on:\n%s", res.Content)
	}
}
