// Package scripts_test checks the release install path outside GitHub:
// scripts/install.sh and scripts/action-install.sh against a local directory
// and a local HTTP server standing in for a GitHub release, and `go install
// …@version` against a local module proxy.
package scripts_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/awlrun/awl/internal/testenv"
)

const relVersion = "v1.2.3"

// awlBinary builds awl once per test binary, stamped as relVersion.
var awlBinary = sync1(func(dir string) (string, error) {
	exe := filepath.Join(dir, "awl")
	// Built as the tests' own packages are (no -trimpath, cgo as it is), so
	// the build cache serves everything but the link.
	cmd := exec.Command("go", "build",
		"-ldflags", "-X main.version="+relVersion+" -X main.commit=0123456789ab -X main.date=2026-12-01T00:00:00Z",
		"-o", exe, "../cmd/awl")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return exe, nil
})

// sync1 runs f once, in a directory that lives as long as the test binary.
func sync1(f func(dir string) (string, error)) func(t testing.TB) string {
	var (
		done bool
		val  string
		err  error
	)
	return func(t testing.TB) string {
		t.Helper()
		if !done {
			dir, e := os.MkdirTemp("", "awl-release-test")
			if e != nil {
				t.Fatal(e)
			}
			val, err = f(dir)
			done = true
		}
		if err != nil {
			t.Fatal(err)
		}
		return val
	}
}

// release lays out a fake GitHub release of relVersion under root, in the
// paths GitHub serves: releases/download/TAG/ASSET, and releases/latest (a
// file here; a redirect from the HTTP server). platforms are os_arch pairs
// that get an archive; corrupt names one whose checksum is made wrong.
func release(t testing.TB, root string, platforms []string, corrupt string) {
	t.Helper()
	exe, err := os.ReadFile(awlBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	dl := filepath.Join(root, "releases", "download", relVersion)
	if err := os.MkdirAll(dl, 0o755); err != nil {
		t.Fatal(err)
	}
	var sums strings.Builder
	for _, p := range platforms {
		name := "awl_" + strings.TrimPrefix(relVersion, "v") + "_" + p + ".tar.gz"
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, f := range []struct {
			name string
			mode int64
			data []byte
		}{{"awl", 0o755, exe}, {"README.md", 0o644, []byte("# awl\n")}} {
			if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(f.data); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dl, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(buf.Bytes())
		if p == corrupt {
			sum[0] ^= 0xff
		}
		fmt.Fprintf(&sums, "%x  %s\n", sum, name)
	}
	if err := os.WriteFile(filepath.Join(dl, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "releases", "latest"), []byte(relVersion+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// server serves root as GitHub would: releases/latest redirects to the
// tag's page. It counts the downloads it served.
func server(t testing.TB, root string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/releases/latest":
			http.Redirect(w, r, "/releases/tag/"+relVersion, http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/releases/tag/"):
			fmt.Fprintln(w, "release page")
		default:
			if strings.HasPrefix(r.URL.Path, "/releases/download/") {
				n.Add(1)
			}
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// run runs a script with env added to a clean environment; it returns
// stdout, stderr and the exit code.
func run(t testing.TB, env []string, name string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", name, err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

func needUnixTools(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the install scripts are for unix shells")
	}
	testenv.RequireCommands(t, "sh", "bash", "curl", "tar", "sha256sum")
}

func hostPlatform() string { return runtime.GOOS + "_" + runtime.GOARCH }

func TestInstallScript(t *testing.T) {
	needUnixTools(t)
	root := t.TempDir()
	release(t, root, []string{hostPlatform()}, "")
	srv, _ := server(t, root)

	for _, tc := range []struct {
		name, base, version string
	}{
		{"http tag", srv.URL, relVersion},
		{"http tag without v", srv.URL, strings.TrimPrefix(relVersion, "v")},
		{"http latest", srv.URL, "latest"},
		{"file latest", "file://" + root, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bin")
			stdout, stderr, code := run(t, []string{"AWL_BASE_URL=" + tc.base, "AWL_VERSION=" + tc.version, "AWL_INSTALL_DIR=" + dir}, "sh", "install.sh")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if got := strings.TrimSpace(stdout); got != filepath.Join(dir, "awl") {
				t.Errorf("stdout = %q, want the installed path alone", got)
			}
			out, err := exec.Command(filepath.Join(dir, "awl"), "--version").Output()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(out), "awl "+relVersion+" (commit 0123456789ab") {
				t.Errorf("awl --version = %q", out)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("install dir holds %d files, want awl alone", len(entries))
			}
		})
	}
}

func TestInstallScriptRefuses(t *testing.T) {
	needUnixTools(t)
	root := t.TempDir()
	release(t, root, []string{hostPlatform(), "linux_arm64"}, hostPlatform())
	srv, _ := server(t, root)
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"bad checksum", nil, "checksum mismatch for awl_1.2.3_" + hostPlatform() + ".tar.gz"},
		{"missing platform", []string{"AWL_OS=darwin", "AWL_ARCH=arm64"}, "release v1.2.3 has no awl_1.2.3_darwin_arm64.tar.gz"},
		{"unknown arch", []string{"AWL_ARCH=riscv64"}, "no awl release for the architecture 'riscv64'"},
		{"bad version", []string{"AWL_VERSION=main"}, "'main' is not a release tag"},
		{"missing release", []string{"AWL_VERSION=v9.9.9"}, "could not download checksums.txt of v9.9.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bin")
			env := append([]string{"AWL_BASE_URL=" + srv.URL, "AWL_VERSION=" + relVersion, "AWL_INSTALL_DIR=" + dir}, tc.env...)
			stdout, stderr, code := run(t, env, "sh", "install.sh")
			if code == 0 {
				t.Fatalf("exit 0, want a failure\nstdout: %s", stdout)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr = %q, want %q", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "awl")); err == nil {
				t.Errorf("awl was installed despite the failure")
			}
		})
	}
}

// actionEnv is a GitHub-like environment for action-install.sh: output
// files, RUNNER_TEMP and RUNNER_TOOL_CACHE, and this machine as the runner.
func actionEnv(t testing.TB) (env []string, outputs, path string) {
	t.Helper()
	tmp := t.TempDir()
	outputs = filepath.Join(tmp, "github_output")
	path = filepath.Join(tmp, "github_path")
	osName := map[string]string{"linux": "Linux", "darwin": "macOS"}[runtime.GOOS]
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	return []string{
		"GITHUB_OUTPUT=" + outputs, "GITHUB_PATH=" + path,
		"RUNNER_TEMP=" + filepath.Join(tmp, "temp"), "RUNNER_TOOL_CACHE=" + filepath.Join(tmp, "toolcache"),
		"AWL_RUNNER_OS=" + osName, "AWL_RUNNER_ARCH=" + arch,
	}, outputs, path
}

func readOutputs(t testing.TB, file string) map[string]string {
	t.Helper()
	b, _ := os.ReadFile(file)
	m := map[string]string{}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		m[k] = v
	}
	return m
}

// actionInstall runs resolve, then install with what resolve said, as the
// action's two steps do; cacheHit stands for actions/cache's output.
func actionInstall(t testing.TB, env []string, outputs string, cacheHit bool) (map[string]string, string, int) {
	t.Helper()
	_, stderr, code := run(t, env, "bash", "action-install.sh", "resolve")
	if code != 0 {
		return nil, stderr, code
	}
	o := readOutputs(t, outputs)
	hit := ""
	if cacheHit {
		hit = "true"
	}
	env = append(env, "AWL_MODE="+o["mode"], "AWL_VERSION="+o["version"], "AWL_DIR="+o["dir"],
		"AWL_OS="+o["os"], "AWL_ARCH="+o["arch"], "AWL_CACHE_HIT="+hit, "AWL_ACTION_PATH="+filepath.Join("..", ""))
	_, stderr2, code := run(t, env, "bash", "action-install.sh", "install")
	return o, stderr + stderr2, code
}

func TestActionInstall(t *testing.T) {
	needUnixTools(t)
	root := t.TempDir()
	release(t, root, []string{hostPlatform()}, "")
	srv, downloads := server(t, root)

	t.Run("release ref, then a cache hit", func(t *testing.T) {
		env, outputs, path := actionEnv(t)
		env = append(env, "AWL_BASE_URL="+srv.URL, "AWL_ACTION_REF="+relVersion)
		o, stderr, code := actionInstall(t, env, outputs, false)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if o["mode"] != "release" || o["version"] != relVersion || o["key"] != "awl-"+relVersion+"-"+hostPlatform()[:strings.Index(hostPlatform(), "_")]+"-"+runtime.GOARCH {
			t.Errorf("resolve said %v", o)
		}
		if !strings.Contains(stderr, "awl "+relVersion+" (commit") {
			t.Errorf("install did not print awl --version:\n%s", stderr)
		}
		p, _ := os.ReadFile(path)
		bin := strings.TrimSpace(string(p))
		if out, err := exec.Command(filepath.Join(bin, "awl"), "version").Output(); err != nil || !strings.HasPrefix(string(out), "awl "+relVersion) {
			t.Errorf("awl on GITHUB_PATH: %q, %v", out, err)
		}
		// The next job: actions/cache restored o["dir"]; nothing is downloaded.
		before := downloads.Load()
		if err := os.Truncate(outputs, 0); err != nil {
			t.Fatal(err)
		}
		_, stderr, code = actionInstall(t, env, outputs, true)
		if code != 0 {
			t.Fatalf("cached install: exit %d\n%s", code, stderr)
		}
		if n := downloads.Load() - before; n != 0 {
			t.Errorf("a cache hit downloaded %d files", n)
		}
	})

	t.Run("latest", func(t *testing.T) {
		env, outputs, _ := actionEnv(t)
		env = append(env, "AWL_BASE_URL="+srv.URL, "AWL_ACTION_REF=main", "AWL_IN_VERSION=latest")
		o, stderr, code := actionInstall(t, env, outputs, false)
		if code != 0 || o["version"] != relVersion {
			t.Fatalf("exit %d, version %q\n%s", code, o["version"], stderr)
		}
	})

	t.Run("bad checksum", func(t *testing.T) {
		bad := t.TempDir()
		release(t, bad, []string{hostPlatform()}, hostPlatform())
		badSrv, _ := server(t, bad)
		env, outputs, path := actionEnv(t)
		env = append(env, "AWL_BASE_URL="+badSrv.URL, "AWL_ACTION_REF="+relVersion)
		_, stderr, code := actionInstall(t, env, outputs, false)
		if code == 0 || !strings.Contains(stderr, "checksum mismatch") {
			t.Fatalf("exit %d, want a checksum failure\n%s", code, stderr)
		}
		if p, _ := os.ReadFile(path); len(p) != 0 {
			t.Errorf("GITHUB_PATH was changed: %q", p)
		}
	})

	t.Run("missing platform", func(t *testing.T) {
		env, outputs, _ := actionEnv(t)
		env = append(env, "AWL_BASE_URL="+srv.URL, "AWL_ACTION_REF="+relVersion)
		env = append(env, "AWL_RUNNER_ARCH=ARM64", "AWL_RUNNER_OS=macOS")
		_, stderr, code := actionInstall(t, env, outputs, false)
		if code == 0 || !strings.Contains(stderr, "has no awl_1.2.3_darwin_arm64.tar.gz") {
			t.Fatalf("exit %d, want a missing-platform failure\n%s", code, stderr)
		}
		env2, outputs2, _ := actionEnv(t)
		env2 = append(env2, "AWL_ACTION_REF="+relVersion, "AWL_RUNNER_OS=FreeBSD")
		_, stderr, code = actionInstall(t, env2, outputs2, false)
		if code == 0 || !strings.Contains(stderr, "no awl release for runner.os 'FreeBSD'") {
			t.Fatalf("exit %d, want an unknown-OS failure\n%s", code, stderr)
		}
	})

	t.Run("branch ref builds from source with the runner's Go", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds awl")
		}
		env, outputs, path := actionEnv(t)
		env = append(env, "AWL_ACTION_REF=main", "GOFLAGS=-buildvcs=false", "GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"))
		o, stderr, code := actionInstall(t, env, outputs, false)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if o["mode"] != "source" || !strings.Contains(stderr, "is not a release: building awl from the action's source") {
			t.Errorf("resolve said %v\n%s", o, stderr)
		}
		p, _ := os.ReadFile(path)
		if out, err := exec.Command(filepath.Join(strings.TrimSpace(string(p)), "awl"), "--version").Output(); err != nil || !strings.HasPrefix(string(out), "awl ") {
			t.Errorf("built awl --version: %q, %v", out, err)
		}
	})
}

func goEnv(t testing.TB, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkActionInstall times the action's install, from the start of its
// first step to `awl --version` (which the install step runs), with the
// release served from a local server: uncached (download and verify) and
// cached (actions/cache restored the directory).
func BenchmarkActionInstall(b *testing.B) {
	for _, tool := range []string{"bash", "curl", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("needs %s", tool)
		}
	}
	root := b.TempDir()
	release(b, root, []string{hostPlatform()}, "")
	srv, _ := server(b, root)
	for _, cached := range []bool{false, true} {
		name := "uncached"
		if cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			env, outputs, _ := actionEnv(b)
			env = append(env, "AWL_BASE_URL="+srv.URL, "AWL_ACTION_REF="+relVersion)
			if cached { // the first install fills the cache directory
				if _, stderr, code := actionInstall(b, env, outputs, false); code != 0 {
					b.Fatal(stderr)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				_ = os.Truncate(outputs, 0)
				if !cached {
					dirs, _ := filepath.Glob(filepath.Join(filepath.Dir(outputs), "toolcache", "awl", "*"))
					for _, d := range dirs {
						_ = os.RemoveAll(d)
					}
				}
				b.StartTimer()
				if _, stderr, code := actionInstall(b, env, outputs, cached); code != 0 {
					b.Fatal(stderr)
				}
			}
		})
	}
}
