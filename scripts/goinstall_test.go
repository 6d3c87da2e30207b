package scripts_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/internal/testenv"
)

// TestGoInstallVersion installs awl as `go install
// github.com/awlrun/awl/cmd/awl@v0.9.0` does, from a module proxy on disk
// that serves this tree as v0.9.0 (its dependencies come from the local
// module cache), and checks that awl --version reports the module version
// from the build information, with no -ldflags stamps.
func TestGoInstallVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds awl from a fresh module cache")
	}
	const mod, ver = "github.com/awlrun/awl", "v0.9.0"
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy", mod, "@v")
	if err := os.MkdirAll(proxy, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": ver, "Time": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	for name, data := range map[string][]byte{"list": []byte(ver + "\n"), ver + ".info": info, ver + ".mod": gomod, ver + ".zip": moduleZip(t, root, mod+"@"+ver)} {
		if err := os.WriteFile(filepath.Join(proxy, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	modcache := filepath.Join(tmp, "modcache")
	gobin := filepath.Join(tmp, "bin")
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.Join(tmp, "proxy")+",file://"+filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download"),
		"GOSUMDB=off", "GOFLAGS=-trimpath", "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOMODCACHE="+modcache, "GOBIN="+gobin)
	t.Cleanup(func() {
		clean := exec.Command("go", "clean", "-modcache")
		clean.Env = env
		_ = clean.Run() // the module cache is read-only; t.TempDir can't remove it alone
	})
	cmd := exec.Command("go", "install", mod+"/cmd/awl@"+ver)
	cmd.Dir = tmp
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(filepath.Join(gobin, "awl"), args...).Output()
		if err != nil {
			t.Fatalf("awl %s: %v", args[0], err)
		}
		if got := strings.TrimSpace(string(out)); got != "awl "+ver {
			t.Errorf("awl %s = %q, want %q", args[0], got, "awl "+ver)
		}
	}
}

// moduleZip zips the module at root as the go command expects it from a
// proxy: every file git tracks or would track, under prefix/, leaving out
// nested modules (each directory below root with a go.mod of its own, as
// tools/ and runner/mcp/testdata/mcpgo/), which the go command refuses in a
// module's zip.
func moduleZip(t *testing.T, root, prefix string) []byte {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		testenv.Require(t, fmt.Sprintf("needs a git checkout: %v", err))
	}
	names := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	var nested []string
	for _, name := range names {
		if dir, file := path.Split(name); file == "go.mod" && dir != "" {
			nested = append(nested, dir)
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range names {
		if name == "" || slices.ContainsFunc(nested, func(dir string) bool { return strings.HasPrefix(name, dir) }) {
			continue
		}
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			continue // deleted in the work tree
		}
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			f.Close()
			continue
		}
		w, err := zw.Create(prefix + "/" + name)
		if err == nil {
			_, err = io.Copy(w, f)
		}
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
