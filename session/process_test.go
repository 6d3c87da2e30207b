//go:build unix

package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/testbin"
	"github.com/awlrun/awl/internal/testenv"
)

// The test binary doubles as the helper process of the multi-process tests:
// with AWL_SESSION_CHILD set it runs one of these roles on the session file
// AWL_SESSION_PATH and exits.
//
//	hold:   Open, print "locked", wait for stdin to close.
//	open:   try Open once; print "ok" or "refused <pid> <message>".
//	append: Open, then append genMessage(n), genMessage(n+1), … forever,
//	        printing each entry's id after Append returns.
func TestMain(m *testing.M) {
	if role := os.Getenv("AWL_SESSION_CHILD"); role != "" {
		os.Exit(child(role, os.Getenv("AWL_SESSION_PATH")))
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func child(role, path string) int {
	switch role {
	case "hold":
		s, err := Open(path)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		s.Close()
	case "handoff":
		// Lock, pass the locked file to a sleep that outlives us, exit:
		// /proc/locks then names our pid, gone, as the holder, as for a
		// SIGKILLed awl whose child had not yet reached its exec.
		s, err := Open(path)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		cmd := exec.Command("sleep", "1000")
		cmd.ExtraFiles = []*os.File{s.f}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println(cmd.Process.Pid)
	case "open":
		s, err := Open(path)
		var se *Error
		switch {
		case err == nil:
			fmt.Println("ok")
			s.Close()
		case errors.As(err, &se) && se.Kind == KindLocked:
			fmt.Println("refused", se.Pid, se.Msg)
		default:
			fmt.Println("error", err)
		}
	case "fsize":
		// A file size limit makes the kernel cut a write short: Append
		// must take the partial line back and stay usable.
		signal.Ignore(syscall.SIGXFSZ)
		fi, err := os.Stat(path)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		lim := uint64(fi.Size()) + 4096
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
			fmt.Println("error", err)
			return 1
		}
		s, err := Open(path)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		_, err = s.Append(Entry{Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock(strings.Repeat("x", 10000))}}})
		fmt.Println("big:", err != nil)
		e, err := s.Append(Entry{Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("small")}}})
		fmt.Println("small:", err, e.ID)
		s.Close()
	case "append":
		s, err := Open(path)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		n := len(s.Conversation())
		for ; ; n++ {
			e, err := s.Append(genEntry(n))
			if err != nil {
				fmt.Println("error", err)
				return 1
			}
			os.Stdout.WriteString(e.ID + "\n")
		}
	}
	return 0
}

// genEntry returns the n-th entry the append child writes: alternating user
// and assistant messages, mostly small, some large (16 KiB, 128 KiB)
// that a kill can land in the middle of their write.
func genEntry(n int) Entry {
	size := 100 + n*37%900
	switch {
	case n%29 == 7:
		size = 128 << 10
	case isLarge(n):
		size = 16 << 10
	}
	payload := strings.Repeat(fmt.Sprintf("line %d \"quoted\"\n", n), size/16+1)[:size]
	if n%2 == 0 {
		return Entry{Provider: "p", Model: "m", Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
			{Type: conv.BlockToolResult, ToolUseID: "t" + strconv.Itoa(n-1), Content: payload},
		}}}
	}
	return Entry{Message: &conv.Message{Role: conv.RoleAssistant, Provider: "p", Model: "m", StopReason: conv.StopToolUse, Content: []conv.Block{
		conv.TextBlock(payload),
		{Type: conv.BlockToolUse, ID: "t" + strconv.Itoa(n), Name: "bash", Input: `{"n":` + strconv.Itoa(n) + `}`},
	}}}
}

func isLarge(n int) bool { return n%29 == 7 || n%11 == 3 }

// startChild runs the test binary in role on path; its stdout lines arrive
// on the returned channel, closed at EOF.
func startChild(t *testing.T, role, path string, stdin io.Reader) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), "-test.run=^$")
	cmd.Env = append(os.Environ(), "AWL_SESSION_CHILD="+role, "AWL_SESSION_PATH="+path)
	cmd.Stdin = stdin
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1<<16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

func TestLockBetweenProcesses(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	// This process holds it: a child is refused, and told our pid.
	cmd, lines := startChild(t, "open", s.Path, nil)
	got := <-lines
	cmd.Wait()
	if !strings.HasPrefix(got, "refused ") || !strings.Contains(got, s.Header.ID) {
		t.Fatalf("child opening a held session: %q", got)
	}
	if havePids() && !strings.HasPrefix(got, "refused "+strconv.Itoa(os.Getpid())+" ") {
		t.Errorf("child was not told our pid %d: %q", os.Getpid(), got)
	}
	s.Close()

	// A child appending holds it: we are refused, the file stays valid.
	cmd, lines = startChild(t, "append", s.Path, nil)
	for range 3 {
		if id := <-lines; len(id) != 8 {
			t.Fatalf("child: %q", id)
		}
	}
	_, err = Open(s.Path)
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindLocked {
		t.Fatalf("Open while a child appends: %v", err)
	}
	if havePids() && se.Pid != cmd.Process.Pid {
		t.Errorf("pid %d, want the child's %d", se.Pid, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	r, err := Open(s.Path)
	if err != nil {
		t.Fatalf("Open after the child died: %v", err)
	}
	r.Close()

	// A child holding it blocks us until it closes.
	pr, pw := io.Pipe()
	cmd, lines = startChild(t, "hold", s.Path, pr)
	if got := <-lines; got != "locked" {
		t.Fatalf("hold child: %q", got)
	}
	if _, err := Open(s.Path); !errors.As(err, &se) || se.Kind != KindLocked {
		t.Errorf("Open while held: %v", err)
	}
	pw.Close()
	cmd.Wait()
	r, err = Open(s.Path)
	if err != nil {
		t.Fatalf("Open after release: %v", err)
	}
	r.Close()
}

// TestLockOfAGoneHolder: a lock held for a process that is gone (a resume
// the moment a SIGKILLed awl was reaped, while the kernel still releases
// its files or its child has not yet exec'd) is waited for, not refused.
func TestLockOfAGoneHolder(t *testing.T) {
	if !havePids() {
		testenv.Require(t, "no /proc/locks: the holder is unknown")
	}
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	cmd, lines := startChild(t, "handoff", s.Path, nil)
	got := <-lines
	cmd.Wait()
	sleep, err := strconv.Atoi(got)
	if err != nil {
		t.Fatalf("handoff child: %q", got)
	}
	t.Cleanup(func() { syscall.Kill(sleep, syscall.SIGKILL) })
	if !holderGone(cmd.Process.Pid) || holderGone(os.Getpid()) {
		t.Fatalf("holderGone(the reaped child %d) = %v, holderGone(self) = %v", cmd.Process.Pid, holderGone(cmd.Process.Pid), holderGone(os.Getpid()))
	}
	seen := 0
	testHookDeadHolder = func(pid int) {
		if pid != cmd.Process.Pid {
			t.Errorf("waited for pid %d, want the gone child %d", pid, cmd.Process.Pid)
		}
		// The lock is released once its last holder closes it.
		if seen++; seen == 1 {
			syscall.Kill(sleep, syscall.SIGKILL)
		}
	}
	defer func() { testHookDeadHolder = nil }()
	r, err := Open(s.Path)
	if err != nil {
		t.Fatalf("Open of a session locked for a gone process: %v", err)
	}
	r.Close()
	if seen == 0 {
		t.Error("Open never found the lock held: the test proves nothing")
	}
}

// TestLockReleasedWhileLooking: a lock released between the attempt that
// found it held and the look for its holder in /proc/locks (the last
// process holding a dead awl's file ending just then) is taken, not
// refused as in use by an unknown process. TestLockOfAGoneHolder met this
// now and then under load: the sleep it kills died in between.
func TestLockReleasedWhileLooking(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	released := 0
	testHookLockBusy = func() {
		if released++; released == 1 {
			s.Close() // the holder lets go before its pid is looked up
		}
	}
	defer func() { testHookLockBusy = nil }()
	r, err := Open(s.Path)
	if err != nil {
		t.Fatalf("Open of a session released while its holder was looked up: %v", err)
	}
	r.Close()
	if released == 0 {
		t.Error("Open never found the lock held: the test proves nothing")
	}
}

// TestHolderGoneZombie: a zombie holds no files; its lock is going.
func TestHolderGoneZombie(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		testenv.Require(t, "no /proc")
	}
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "exit 0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Wait4(pid, nil, 0, nil)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never became a zombie: %s", pid, b)
		}
	}
	if !holderGone(pid) {
		t.Errorf("holderGone(zombie %d) = false", pid)
	}
}

func TestAppendTakesBackAShortWrite(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, Entry{Provider: "p", Model: "m", Message: userMsg("first")})
	s.Close()
	cmd, lines := startChild(t, "fsize", s.Path, nil)
	var out []string
	for l := range lines {
		out = append(out, l)
	}
	cmd.Wait()
	if len(out) != 2 || out[0] != "big: true" || !strings.HasPrefix(out[1], "small: <nil> ") {
		t.Fatalf("child: %q", out)
	}
	r, err := Open(s.Path)
	if err != nil {
		t.Fatalf("Open after a short write: %v", err)
	}
	defer r.Close()
	c := r.Conversation()
	if r.Recovered || len(c) != 2 || c[1].Text() != "small" || r.Entries[1].ParentID != r.Entries[0].ID {
		t.Errorf("after a short write: recovered=%v %+v", r.Recovered, c)
	}
}

func havePids() bool {
	_, err := os.Stat("/proc/locks")
	return err == nil
}

// TestCrash kills an appending child with SIGKILL at random moments. Every
// time, the file opens, the conversation is exactly the acknowledged
// entries (plus at most the one in flight, if its line was complete), and
// appending afterwards gives a valid file.
func TestCrash(t *testing.T) {
	iterations := 200
	if testing.Short() {
		iterations = 40
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	st := testStore(t)
	var path string
	total := 0 // messages known to be in the file
	recovered := 0
	var want []conv.Message // genEntry's messages, generated once
	for i := range iterations {
		if i%5 == 0 { // a fresh session now and then keeps the test fast
			s, err := st.Create("/crash", "p", "m")
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			path, total = s.Path, 0
		}
		cmd, lines := startChild(t, "append", path, nil)
		var acked []string
		// Kill at a random time (which may fall in start-up or in Open's
		// recovery), right after the ack that precedes a large entry (to
		// catch its write half done), or after a random number of acks.
		wait := func(n int) {
			for len(acked) < n {
				id, ok := <-lines
				if !ok {
					t.Fatalf("child exited early after %v", acked)
				}
				acked = append(acked, id)
			}
		}
		switch rng.IntN(4) {
		case 0:
			time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
		case 1:
			j := 0
			for !isLarge(total + j + 1) {
				j++
			}
			wait(j + 1)
			time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
		default:
			wait(rng.IntN(10))
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for id := range lines {
			acked = append(acked, id)
		}
		cmd.Wait()
		for _, id := range acked {
			if len(id) != 8 {
				t.Fatalf("child said %q", id)
			}
		}

		s, err := Open(path)
		if err != nil {
			t.Fatalf("iteration %d: Open after kill: %v", i, err)
		}
		if s.Recovered {
			recovered++
		}
		c := s.Conversation()
		if len(c) != total+len(acked) && len(c) != total+len(acked)+1 {
			t.Fatalf("iteration %d: %d messages, want %d acknowledged (+1 in flight)", i, len(c), total+len(acked))
		}
		for k := max(total-1, 0); k < len(c); k++ {
			for len(want) <= k {
				want = append(want, *genEntry(len(want)).Message)
			}
			if !sameMessage(c[k], want[k]) {
				t.Fatalf("iteration %d: message %d differs", i, k)
			}
		}
		for k, id := range acked {
			if got := s.Entries[total+k].ID; got != id {
				t.Fatalf("iteration %d: entry %d is %s, child acknowledged %s", i, total+k, got, id)
			}
		}
		// Appending after recovery: the next iteration's Open (or the
		// final Load) checks that the result is valid.
		mustAppend(t, s, genEntry(len(c)))
		s.Close()
		total = len(c) + 1
	}
	if r, err := Load(path); err != nil || r.Recovered || len(r.Conversation()) != total {
		t.Fatalf("final Load: %v", err)
	}
	t.Logf("%d kills, %d torn last lines trimmed", iterations, recovered)
}

func sameMessage(a, b conv.Message) bool {
	if a.Role != b.Role || len(a.Content) != len(b.Content) || a.StopReason != b.StopReason {
		return false
	}
	for i := range a.Content {
		x, y := a.Content[i], b.Content[i]
		if x.Type != y.Type || x.Text != y.Text || x.Content != y.Content || x.Input != y.Input || x.ToolUseID != y.ToolUseID || x.ID != y.ID {
			return false
		}
	}
	return true
}
