//go:build linux

package sandbox_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/runner/sandbox"
)

// The write and edit tools run in awl's unconfined process: these are the
// ways a confined command tried to lead them out of the writable
// directories (issue 24).

// A dangling link in the workspace, made by a confined command, pointing
// at a file that does not exist yet outside: write would create it.
func TestWriteDanglingLinkOut(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	target := filepath.Join(f.home, ".gitconfig")
	mustOK(t, f.bash(t, "ln -s "+target+" notes.txt && ln -s ../home/deep/x chain && ln -s chain chain2"))
	mustDenied(t, f.call(t, "write", map[string]any{"path": "notes.txt", "content": "[core]\n\tfsmonitor = evil\n"}), f.sb.Note(), "write: notes.txt: Permission denied")
	mustNotExist(t, target)
	// Through a relative link, and a chain of them, with parents to create.
	mustDenied(t, f.call(t, "write", map[string]any{"path": "chain2", "content": "x"}), f.sb.Note(), "Permission denied")
	mustNotExist(t, filepath.Join(f.home, "deep"))
	// A link that stays inside is still followed, and stays a link.
	mustOK(t, f.bash(t, "ln -s sub/real.txt inside.txt"))
	mustOK(t, f.call(t, "write", map[string]any{"path": "inside.txt", "content": "in\n"}))
	if b, err := os.ReadFile(filepath.Join(f.cwd, "sub", "real.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("sub/real.txt: %q, %v", b, err)
	}
	if st, err := os.Lstat(filepath.Join(f.cwd, "inside.txt")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("inside.txt is no longer a link: %v %v", st, err)
	}
}

// The same in read-only mode, through a --sandbox-writable directory.
func TestWriteDanglingLinkOutReadOnly(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	cache := t.TempDir()
	f := newFixture(t, sandbox.Options{Mode: sandbox.ReadOnly, Writable: []string{cache}})
	target := filepath.Join(f.home, ".bashrc")
	if err := os.Symlink(target, filepath.Join(cache, "rc")); err != nil {
		t.Fatal(err)
	}
	mustDenied(t, f.call(t, "write", map[string]any{"path": filepath.Join(cache, "rc"), "content": "evil\n"}), f.sb.Note(), "Permission denied")
	mustNotExist(t, target)
	// An existing file outside, through a link in the writable directory.
	if err := os.WriteFile(target, []byte("good\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustDenied(t, f.call(t, "edit", map[string]any{"path": filepath.Join(cache, "rc"), "old_string": "good", "new_string": "evil"}), f.sb.Note(), "Permission denied")
	if b, _ := os.ReadFile(target); string(b) != "good\n" {
		t.Errorf("%s edited through the link: %q", target, b)
	}
	mustOK(t, f.call(t, "write", map[string]any{"path": filepath.Join(cache, "d", "new.txt"), "content": "ok"}))
}

// A process swapping a link in the workspace between a file inside and
// one outside, while the model writes through it: no write may land
// outside, however the swaps fall between the check and the write.
func TestWriteSwapRace(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	outside := filepath.Join(f.home, "victim.txt")
	if err := os.WriteFile(outside, []byte("untouched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(f.cwd, "in.txt")
	link := filepath.Join(f.cwd, "t.txt")
	dirLink := filepath.Join(f.cwd, "d")
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.cwd, "realdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the swapper: a link for the file, and for its directory
		defer wg.Done()
		tmp, tmpDir := link+".new", dirLink+".new"
		for i := 0; !stop.Load(); i++ {
			dest, dirDest := inside, filepath.Join(f.cwd, "realdir")
			if i%2 == 1 {
				dest, dirDest = outside, f.home
			}
			os.Remove(tmp)
			os.Symlink(dest, tmp)
			os.Rename(tmp, link)
			os.Remove(tmpDir)
			os.Symlink(dirDest, tmpDir)
			os.Rename(tmpDir, dirLink)
		}
	}()
	for range 300 {
		f.call(t, "write", map[string]any{"path": "t.txt", "content": "swapped\n"})
		f.call(t, "write", map[string]any{"path": "d/victim.txt", "content": "swapped\n"})
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(outside); string(b) != "untouched\n" {
		t.Fatalf("%s was written through the swapped link: %q", outside, b)
	}
	if ents, _ := os.ReadDir(f.home); len(ents) != 1 {
		t.Errorf("files appeared outside: %v", ents)
	}
}

// A descriptor awl inherited open on a file outside (`exec 7>>outside;
// awl run …`) must not reach a confined command, which Landlock would not
// stop from writing through it.
func TestInheritedDescriptor(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	outside := outsideTmp(t)
	fd, err := syscall.Open(outside, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	res := f.bash(t, fmt.Sprintf("echo escaped >&%d", fd))
	if !res.IsError || !strings.Contains(res.Content, "Bad file descriptor") {
		t.Errorf("echo >&%d: want a bad descriptor error:\n%s", fd, res.Content)
	}
	if b, _ := os.ReadFile(outside); len(b) != 0 {
		t.Errorf("written through the inherited descriptor: %q", b)
	}
	// awl itself still has it.
	if _, err := syscall.Write(fd, []byte("awl\n")); err != nil {
		t.Errorf("awl's own descriptor: %v", err)
	}
}

// udpListener counts datagrams received on 127.0.0.1.
func udpListener(t *testing.T) (port int, received func() int) {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var n atomic.Int32
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).Port, func() int {
		time.Sleep(100 * time.Millisecond) // let a datagram in flight arrive
		return int(n.Load())
	}
}

// Landlock governs TCP connect and bind only: no datagram, Fast Open
// connection, raw packet or listening socket may get out with the network
// off, and the listeners in the test receive nothing.
func TestNetworkEscapes(t *testing.T) {
	requireABI(t, sandbox.ABINetwork)
	udpPort, datagrams := udpListener(t)
	tcpPort, accepted := listen(t)
	f := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite})
	for _, c := range []struct{ what, arg string }{
		{"udp", fmt.Sprint(udpPort)},
		{"fastopen", fmt.Sprint(tcpPort)},
		{"raw", fmt.Sprint(udpPort)},
		{"listen", ""},
	} {
		res := f.bash(t, probeCommand(t, c.what, c.arg))
		mustDenied(t, res, f.sb.Note(), "probe failed: socket: permission denied")
	}
	if n := datagrams(); n != 0 {
		t.Errorf("the UDP listener received %d datagrams from a confined command", n)
	}
	select {
	case <-accepted:
		t.Error("a confined command connected with TCP Fast Open")
	default:
	}

	// With --sandbox-network, all of it works, an abstract UNIX socket
	// outside the command included.
	name := fmt.Sprintf("awl-test-%d", os.Getpid())
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	mustDenied(t, f.bash(t, probeCommand(t, "abstract", name)), f.sb.Note(), "probe failed")
	on := newFixture(t, sandbox.Options{Mode: sandbox.WorkspaceWrite, Network: true})
	mustOK(t, on.bash(t, probeCommand(t, "udp", fmt.Sprint(udpPort))))
	mustOK(t, on.bash(t, probeCommand(t, "listen", "")))
	mustOK(t, on.bash(t, probeCommand(t, "abstract", name)))
	if n := datagrams(); n != 1 {
		t.Errorf("the UDP listener received %d datagrams with the network on, want 1", n)
	}
}
