package watchdog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestEndOfInputIsAwlGone: the script sees what is written to it, runs in
// a session of its own, and sees end of input once the write end closes.
func TestEndOfInputIsAwlGone(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	w, err := Start(`while read -r line; do echo "got $line" >> "$1"; done; echo "sid $(ps -o sid= -p $$ | tr -d ' ') pid $$" >> "$1"; echo eof >> "$1"`, "test-watch", out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("+42\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		s := string(b)
		if strings.HasSuffix(s, "eof\n") {
			if !strings.HasPrefix(s, "got +42\n") {
				t.Fatalf("script saw %q", s)
			}
			var sid, pid int
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "sid ") {
					if _, err := fmt.Sscanf(l, "sid %d pid %d", &sid, &pid); err != nil {
						t.Fatalf("%q: %v", l, err)
					}
				}
			}
			own, err := unix.Getsid(0)
			if err != nil {
				t.Fatal(err)
			}
			if sid != pid || sid == own {
				t.Fatalf("script's session %d (pid %d): not a session of its own (the test's is %d)", sid, pid, own)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no end of input seen in 30 s: %q", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
