//go:build unix

package tool

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testbin"
)

// The test binary doubles as a helper process: with AWL_TOOL_CHILD set it
// runs that role and exits.
//
//	write-loop: print "ready", then write $AWL_TOOL_FILE with the write
//	            tool forever, one large content after the other, printing
//	            "wrote" after each.
func TestMain(m *testing.M) {
	if role := os.Getenv("AWL_TOOL_CHILD"); role != "" {
		os.Exit(child(role))
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func child(role string) int {
	switch role {
	case "write-loop":
		// The arguments are decoded already: the test is about the
		// moment the file is replaced, not about JSON.
		file := os.Getenv("AWL_TOOL_FILE")
		write := writeTool{Env{Dir: filepath.Dir(file)}}
		fmt.Println("ready")
		for i := 0; ; i++ {
			if res := write.run(context.Background(), writeArgs{Path: filepath.Base(file), Content: crashContent(i % 2)}); res.IsError {
				fmt.Println("error", res.Content)
				return 1
			}
			fmt.Println("wrote")
		}
	}
	fmt.Println("unknown role", role)
	return 2
}

// crashContent is one of the two contents the crash loop writes: 1 MiB of
// lines that say which content they belong to.
func crashContent(i int) string {
	return crashContents[i]
}

var crashContents = func() (c [2]string) {
	for i := range c {
		line := fmt.Sprintf("content %d: the quick brown fox jumps over the lazy dog\n", i)
		c[i] = strings.Repeat(line, 1<<20/len(line))
	}
	return c
}()

// TestWriteSurvivesSIGKILL kills a process that keeps rewriting a 1 MiB
// file, at random moments, 200 times. The file must always hold one whole
// content or the other: never a truncated, empty or mixed one.
func TestWriteSurvivesSIGKILL(t *testing.T) {
	bin := testbin.Path(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "big.txt")
	contents := [2]string{crashContent(0), crashContent(1)}
	if err := os.WriteFile(file, []byte(contents[0]), 0o640); err != nil {
		t.Fatal(err)
	}
	const kills = 200
	midWrite := 0
	for n := range kills {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), "AWL_TOOL_CHILD=write-loop", "AWL_TOOL_FILE="+file)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Time one whole write, then kill at a random moment of the
		// next one (or just after it).
		out := bufio.NewReader(stdout)
		line, _ := out.ReadString('\n')
		start := time.Now()
		if line == "ready\n" {
			line, _ = out.ReadString('\n')
		}
		if line != "wrote\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("kill %d: helper said %q", n+1, line)
		}
		cycle := time.Since(start)
		time.Sleep(time.Duration(rand.Int64N(int64(cycle) * 5 / 4)))
		cmd.Process.Kill()
		cmd.Wait()

		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("kill %d: %v", n+1, err)
		}
		if string(got) != contents[0] && string(got) != contents[1] {
			t.Fatalf("kill %d: the file holds %d bytes that are neither content (%d bytes each); starts %q",
				n+1, len(got), len(contents[0]), got[:min(len(got), 40)])
		}
		st, err := os.Stat(file)
		if err != nil || st.Mode().Perm() != 0o640 {
			t.Fatalf("kill %d: mode %v, %v; want 0640 kept", n+1, st.Mode(), err)
		}
		// A SIGKILL mid-write may leave the temporary file; count and
		// clear them, so the test shows it hit the window it is about.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() != "big.txt" {
				midWrite++
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	t.Logf("%d of %d kills landed while a temporary file existed", midWrite, kills)
	if midWrite == 0 {
		t.Errorf("no kill of %d landed during a write: the test did not exercise the crash window", kills)
	}
}

func TestWriteThroughSymlinksKeepsTheLinks(t *testing.T) {
	dir := tree(t, map[string]string{"real/target.txt": "old\n"})
	real := filepath.Join(dir, "real", "target.txt")
	if err := os.Chmod(real, 0o600); err != nil {
		t.Fatal(err)
	}
	// link -> hop -> real/target.txt, one relative and one absolute link.
	if err := os.Symlink(real, filepath.Join(dir, "hop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("hop", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	env := Env{Dir: dir}
	want(t, call(t, env, "write", `{"path":"link","content":"new\n"}`), false, "overwrote link: wrote 4 bytes")
	want(t, call(t, env, "edit", `{"path":"link","old_string":"new","new_string":"newer"}`), false, "edited link")
	for _, l := range []string{"hop", "link"} {
		if st, err := os.Lstat(filepath.Join(dir, l)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink: %v %v", l, st.Mode(), err)
		}
	}
	if got, _ := os.ReadFile(real); string(got) != "newer\n" {
		t.Errorf("target holds %q, want %q", got, "newer\n")
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v, want 0600 kept", st.Mode())
	}
	// A dangling link: the file it names is created, the link stays.
	if err := os.Symlink("real/made.txt", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	want(t, call(t, env, "write", `{"path":"dangling","content":"x"}`), false, "created dangling")
	if got, _ := os.ReadFile(filepath.Join(dir, "real", "made.txt")); string(got) != "x" {
		t.Errorf("made.txt holds %q", got)
	}
	// A loop is an error, not a hang.
	os.Symlink("loop2", filepath.Join(dir, "loop1"))
	os.Symlink("loop1", filepath.Join(dir, "loop2"))
	want(t, call(t, env, "write", `{"path":"loop1","content":"x"}`), true, "write:")
	// No temporary file is left anywhere.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".awl-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestWriteNewFileHonoursUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	want(t, call(t, Env{Dir: dir}, "write", `{"path":"n.txt","content":"x"}`), false, "created n.txt")
	if st, err := os.Stat(filepath.Join(dir, "n.txt")); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v, %v; want 0640 (0644 less umask 027)", st.Mode(), err)
	}
}

func TestReadOnlyTools(t *testing.T) {
	var ro, rw []string
	for _, tl := range Builtins(Env{}) {
		if tl.ReadOnly() {
			ro = append(ro, tl.Name())
		} else {
			rw = append(rw, tl.Name())
		}
	}
	if got := strings.Join(ro, " "); got != "read ls glob grep view_image" {
		t.Errorf("read-only tools: %s", got)
	}
	if got := strings.Join(rw, " "); got != "bash write edit" {
		t.Errorf("mutating tools: %s", got)
	}
}
