package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awlrun/awl/internal/testenv"
	"github.com/awlrun/awl/runner/mcp/mcptest"
	"github.com/awlrun/awl/runner/sandbox"
	"github.com/awlrun/awl/runner/tool"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(mcptest.ModeVar); mode != "" {
		mcptest.Main(mode)
		return
	}
	os.Exit(m.Run())
}

// npmBin returns the path of an npm-installed MCP server's executable.
// Without it (npm ci not run in testdata/npm, or MCP_NPM_OFFLINE=1) the
// test skips, except in CI, where it fails.
func npmBin(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if why := testenv.NPMServerMissing(p); why != "" {
		testenv.Require(t, why)
	}
	return p
}

func start(t *testing.T, servers []Server, o Options) (*Manager, *testenv.Buffer) {
	t.Helper()
	stderr := &testenv.Buffer{}
	o.Stderr = stderr
	if o.Environ == nil {
		o.Environ = tool.ScrubEnviron(os.Environ())
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	m := Start(context.Background(), servers, o)
	t.Cleanup(m.Close)
	return m, stderr
}

func toolByName(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Name())
	}
	t.Fatalf("no tool %s in %v", name, names)
	return nil
}

func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	return tl.Run(context.Background(), json.RawMessage(args))
}

func fake(t *testing.T, name, mode string) (Server, string) {
	log := filepath.Join(t.TempDir(), "fake.log")
	return Server{Name: name, Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{mcptest.ModeVar: mode, mcptest.LogVar: log}}, log
}

func everything(t *testing.T) Server {
	return Server{Name: "everything", Command: npmBin(t, "mcp-server-everything"), Env: map[string]string{"AWL_TEST_MARK": "from-config"}}
}

func TestEverythingStdio(t *testing.T) {
	m, stderr := start(t, []Server{everything(t)}, Options{})
	st := m.Status()
	if len(st) != 1 || st[0].Err != nil {
		t.Fatalf("status: %+v", st)
	}
	if !slices.Contains(st[0].Tools, "mcp__everything__echo") || !slices.Contains(st[0].Tools, "mcp__everything__get-tiny-image") {
		t.Fatalf("tools: %v", st[0].Tools)
	}
	if st[0].Duration <= 0 {
		t.Errorf("duration %v", st[0].Duration)
	}

	echo := toolByName(t, m, "mcp__everything__echo")
	if ro, ok := echo.(interface{ ReadOnly() bool }); !ok || !ro.ReadOnly() {
		t.Errorf("echo (readOnlyHint) is not read-only")
	}
	if !strings.Contains(string(echo.Schema()), `"message"`) {
		t.Errorf("echo schema: %s", echo.Schema())
	}
	res := call(t, echo, `{"message":"hello <there> & \u00e9"}`)
	if res.IsError || !strings.Contains(res.Content, "hello <there> & é") {
		t.Errorf("echo: %+v", res)
	}

	// A tool marked readOnlyHint: false is not read-only.
	if toolByName(t, m, "mcp__everything__toggle-simulated-logging").(interface{ ReadOnly() bool }).ReadOnly() {
		t.Errorf("toggle-simulated-logging is read-only")
	}
	env := toolByName(t, m, "mcp__everything__get-env")
	res = call(t, env, `{}`)
	if !strings.Contains(res.Content, "from-config") {
		t.Errorf("config env missing from the server's environment: %.300s", res.Content)
	}

	img := call(t, toolByName(t, m, "mcp__everything__get-tiny-image"), `{}`)
	if img.IsError || len(img.Attachments) != 1 || img.Attachments[0].MimeType != "image/png" {
		t.Fatalf("image: %+v", img)
	}
	if raw, err := base64.StdEncoding.DecodeString(img.Attachments[0].Data); err != nil || !bytes.HasPrefix(raw, []byte("\x89PNG")) {
		t.Errorf("image data is not a PNG: %v", err)
	}
	if !strings.Contains(img.Content, "image 1: image/png") {
		t.Errorf("image text: %q", img.Content)
	}

	sc := call(t, toolByName(t, m, "mcp__everything__get-structured-content"), `{"location":"New York"}`)
	if sc.IsError || !strings.Contains(sc.Content, `"temperature"`) {
		t.Errorf("structured content: %+v", sc)
	}
	var v any
	lines := strings.Split(strings.TrimSpace(sc.Content), "\n")
	if json.Unmarshal([]byte(lines[len(lines)-1]), &v) != nil {
		t.Errorf("structured content is not JSON text: %q", sc.Content)
	}

	links := call(t, toolByName(t, m, "mcp__everything__get-resource-links"), `{"count":2}`)
	if links.IsError || strings.Count(links.Content, "Resource: demo://") != 2 {
		t.Errorf("resource links: %+v", links)
	}

	bad := call(t, echo, `["not an object"]`)
	if !bad.IsError {
		t.Errorf("array arguments: %+v", bad)
	}
	// The server's own validation error comes back as an error result.
	missing := call(t, echo, `{}`)
	if !missing.IsError {
		t.Errorf("echo without message: %+v", missing)
	}
	_ = stderr
}

func TestEverythingHTTP(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	port := freePort(t)
	cmd := exec.Command("node", bin, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://127.0.0.1:" + port + "/mcp"
	waitListening(t, "127.0.0.1:"+port, &out)

	m, _ := start(t, []Server{{Name: "web", URL: url, Headers: map[string]string{"X-Awl-Test": "secret-header-value"}, secrets: []string{"secret-header-value"}}}, Options{})
	st := m.Status()
	if st[0].Err != nil || st[0].Transport != "http" {
		t.Fatalf("status: %+v\nserver: %s", st, out.String())
	}
	res := call(t, toolByName(t, m, "mcp__web__echo"), `{"message":"over http"}`)
	if res.IsError || !strings.Contains(res.Content, "over http") {
		t.Errorf("echo: %+v", res)
	}
	img := call(t, toolByName(t, m, "mcp__web__get-tiny-image"), `{}`)
	if len(img.Attachments) != 1 {
		t.Errorf("image over http: %+v", img)
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func waitListening(t *testing.T, addr string, out *testenv.Buffer) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server on %s never listened: %s", addr, out.String())
}

func TestFilesystemServer(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	m, _ := start(t, []Server{{Name: "fs", Command: npmBin(t, "mcp-server-filesystem"), Args: []string{dir}}}, Options{})
	if st := m.Status(); st[0].Err != nil {
		t.Fatalf("status: %+v", st)
	}
	read := toolByName(t, m, "mcp__fs__read_text_file")
	res := call(t, read, fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "a.txt")))
	if res.IsError || !strings.Contains(res.Content, "alpha") {
		t.Errorf("read: %+v", res)
	}
	write := toolByName(t, m, "mcp__fs__write_file")
	if write.(*Tool).ReadOnly() {
		t.Errorf("write_file is read-only")
	}
	res = call(t, write, fmt.Sprintf(`{"path":%q,"content":"beta"}`, filepath.Join(dir, "b.txt")))
	if res.IsError {
		t.Fatalf("write: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "beta" {
		t.Errorf("b.txt = %q", b)
	}
	// Outside the allowed directory the server refuses: an error result.
	res = call(t, read, `{"path":"/etc/passwd"}`)
	if !res.IsError || strings.Contains(res.Content, "root:") {
		t.Errorf("read outside: %+v", res)
	}
}

// Roots are declared only to a server whose config asks: then
// server-filesystem serves the roots instead of the directory its
// arguments name (which is why they are not declared to every server).
func TestFilesystemServerRoots(t *testing.T) {
	configured, work, data := t.TempDir(), t.TempDir(), t.TempDir()
	for d, text := range map[string]string{configured: "configured\n", work: "workspace\n", data: "data\n"} {
		os.WriteFile(filepath.Join(d, "a.txt"), []byte(text), 0o644)
	}
	bin := npmBin(t, "mcp-server-filesystem")
	m, stderr := start(t, []Server{
		{Name: "plain", Command: bin, Args: []string{configured}},
		{Name: "work", Command: bin, Args: []string{configured}, Roots: []string{"."}},
		{Name: "data", Command: bin, Args: []string{configured}, Roots: []string{data}},
	}, Options{Dir: work})
	for _, st := range m.Status() {
		if st.Err != nil {
			t.Fatalf("status: %+v\n%s", st, stderr)
		}
	}
	for _, c := range []struct{ server, serves string }{{"plain", configured}, {"work", work}, {"data", data}} {
		read := toolByName(t, m, "mcp__"+c.server+"__read_text_file")
		// server-filesystem takes the roots from the client once it is
		// initialized: ask until they are in effect, at most 30 s.
		var res tool.Result
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			res = call(t, read, fmt.Sprintf(`{"path":%q}`, filepath.Join(c.serves, "a.txt")))
			if !res.IsError || time.Now().After(deadline) {
				break
			}
		}
		if res.IsError {
			t.Errorf("%s: reading in %s: %+v", c.server, c.serves, res)
		}
		for _, other := range []string{configured, work, data} {
			if other == c.serves {
				continue
			}
			if res := call(t, read, fmt.Sprintf(`{"path":%q}`, filepath.Join(other, "a.txt"))); !res.IsError {
				t.Errorf("%s serves %s too: %+v", c.server, other, res)
			}
		}
	}
}

func TestHangAtStartup(t *testing.T) {
	hang, _ := fake(t, "hang", "hang")
	okSrv, _ := fake(t, "good", "crash")
	begin := time.Now()
	m, stderr := start(t, []Server{hang, okSrv}, Options{Timeout: 1500 * time.Millisecond})
	st := m.Status()
	if st[0].Name != "good" || st[1].Name != "hang" || st[1].Err == nil || !strings.Contains(st[1].Err.Error(), "--mcp-timeout") {
		t.Fatalf("hang status: %+v", st)
	}
	// The start returns at the timeout; stopping the hung process does
	// not hold it up.
	if st[1].Duration > 1400*time.Millisecond+time.Second {
		t.Errorf("hang took %s to fail", st[1].Duration)
	}
	if st[0].Err != nil {
		t.Fatalf("the good server failed too: %+v", st[0])
	}
	if len(m.Failed()) != 1 {
		t.Errorf("failed: %+v", m.Failed())
	}
	if !strings.Contains(stderr.String(), "awl: mcp server hang failed to start") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "mcp hang: fake: hanging") {
		t.Errorf("server stderr not passed on with its prefix: %s", stderr.String())
	}
	for _, tl := range m.Tools() {
		if strings.HasPrefix(tl.Name(), "mcp__hang__") {
			t.Errorf("tool of a failed server offered: %s", tl.Name())
		}
	}
	// The hung process is gone: it was stopped within the start.
	if d := time.Since(begin); d > 15*time.Second {
		t.Errorf("start took %s", d)
	}
}

func TestCrashMidCall(t *testing.T) {
	srv, log := fake(t, "fake", "crash")
	m, stderr := start(t, []Server{srv}, Options{})
	crash := toolByName(t, m, "mcp__fake__crash")
	ok := toolByName(t, m, "mcp__fake__ok")
	res := call(t, crash, `{}`)
	if !res.IsError || !strings.Contains(res.Content, "stopped during the call") || !strings.Contains(res.Content, "restarted") {
		t.Fatalf("crash: %+v", res)
	}
	// Restarted once: the next call works.
	if res := call(t, ok, `{}`); res.IsError || res.Content != "fine" {
		t.Fatalf("after restart: %+v", res)
	}
	// A second crash: no second restart.
	res = call(t, crash, `{}`)
	if !res.IsError || !strings.Contains(res.Content, "not available any more") {
		t.Fatalf("second crash: %+v", res)
	}
	if res := call(t, ok, `{}`); !res.IsError || !strings.Contains(res.Content, "not available") {
		t.Fatalf("after second crash: %+v", res)
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "start crash"); n != 2 {
		t.Errorf("started %d times, want 2:\n%s", n, b)
	}
	if !strings.Contains(stderr.String(), "mcp fake: fake: crashing now") || !strings.Contains(stderr.String(), "restarting it") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestConcurrentCrash(t *testing.T) {
	srv, log := fake(t, "fake", "crash")
	m, _ := start(t, []Server{srv}, Options{})
	crash := toolByName(t, m, "mcp__fake__crash")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if res := call(t, crash, `{}`); !res.IsError {
				t.Errorf("crash: %+v", res)
			}
		})
	}
	wg.Wait()
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "start crash"); n > 3 {
		t.Errorf("started %d times:\n%s", n, b)
	}
}

func TestGarbageOnStdout(t *testing.T) {
	srv, _ := fake(t, "noisy", "garbage")
	m, stderr := start(t, []Server{srv}, Options{})
	if st := m.Status(); st[0].Err != nil {
		t.Fatalf("status: %+v", st)
	}
	res := call(t, toolByName(t, m, "mcp__noisy__ok"), `{}`)
	if res.IsError || res.Content != "fine" {
		t.Fatalf("call: %+v", res)
	}
	// Control bytes are shown escaped, never sent to the terminal raw.
	if strings.ContainsAny(stderr.String(), "\x1b\r\x07") || !strings.Contains(stderr.String(), `mcp noisy: \x1b[2J\x0dscreen cleared\x07`) {
		t.Errorf("control bytes on stderr: %q", stderr.String())
	}
	for _, want := range []string{"mcp noisy (stdout, not JSON-RPC): Fake MCP server v1 starting", "mcp noisy (stdout, not JSON-RPC): garbage in the middle of a call", `mcp noisy (stdout, not JSON-RPC): {"level":30,"msg":"listening"}`, "mcp noisy (stdout, not JSON-RPC): [1,2,3]", `mcp noisy (stdout, not JSON-RPC): {"level":40,"msg":"mid-call log"}`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestCallTimeoutCancels(t *testing.T) {
	srv, log := fake(t, "slow", "slow")
	m, _ := start(t, []Server{srv}, Options{CallTimeout: 300 * time.Millisecond})
	res := call(t, toolByName(t, m, "mcp__slow__wait"), `{}`)
	if !res.IsError || !strings.Contains(res.Content, "--mcp-call-timeout") {
		t.Fatalf("result: %+v", res)
	}
	// The server got notifications/cancelled: its handler saw the
	// cancellation.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), "cancelled") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never saw the cancellation:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The server is still there.
	if res := call(t, toolByName(t, m, "mcp__slow__ok"), `{}`); res.IsError {
		t.Errorf("after timeout: %+v", res)
	}
}

func TestEnvironment(t *testing.T) {
	srv, _ := fake(t, "env", "env")
	srv.Env["FROM_CONFIG"] = "cfg-value"
	environ := []string{"PATH=" + os.Getenv("PATH"), "KEEP=kept"}
	m, _ := start(t, []Server{srv}, Options{Environ: environ})
	envTool := toolByName(t, m, "mcp__env__env")
	for name, want := range map[string]string{"FROM_CONFIG": "set:cfg-value", "KEEP": "set:kept", "HOME_NOT_PASSED": "unset"} {
		if res := call(t, envTool, fmt.Sprintf(`{"name":%q}`, name)); res.Content != want {
			t.Errorf("%s: %q, want %q", name, res.Content, want)
		}
	}
}

func TestMissingCommand(t *testing.T) {
	m, stderr := start(t, []Server{{Name: "nope", Command: "/nonexistent/awl-mcp-server"}}, Options{})
	if st := m.Status(); st[0].Err == nil || !strings.Contains(st[0].Err.Error(), "/nonexistent/awl-mcp-server") {
		t.Fatalf("status: %+v", st)
	}
	if !strings.Contains(stderr.String(), "mcp server nope failed to start") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestHTTPRefusedRedactsSecrets(t *testing.T) {
	port := freePort(t)
	m, stderr := start(t, []Server{{Name: "web", URL: "http://127.0.0.1:" + port + "/mcp?token=tok-SECRET-123", Headers: map[string]string{"Authorization": "Bearer hdr-SECRET-456"}, secrets: []string{"Bearer hdr-SECRET-456", "tok-SECRET-123"}}}, Options{Timeout: 5 * time.Second})
	st := m.Status()
	if st[0].Err == nil {
		t.Fatalf("status: %+v", st)
	}
	for _, s := range []string{st[0].Err.Error(), stderr.String()} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("secret in %q", s)
		}
	}
}

// BenchmarkStartEverything measures MCP startup: from launching
// server-everything over stdio until its tools are listed (Start returns).
// Stopping the server is not timed.
func BenchmarkStartEverything(b *testing.B) {
	srv := Server{Name: "everything", Command: npmBin(b, "mcp-server-everything")}
	benchStart(b, srv)
}

// BenchmarkStartGoServer is the same for a small Go server (the fake), the
// floor a server's own start-up adds to.
func BenchmarkStartGoServer(b *testing.B) {
	srv := Server{Name: "fake", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{mcptest.ModeVar: "crash"}}
	benchStart(b, srv)
}

func benchStart(b *testing.B, srv Server) {
	dir := b.TempDir()
	environ := tool.ScrubEnviron(os.Environ())
	var listed time.Duration
	for b.Loop() {
		m := Start(context.Background(), []Server{srv}, Options{Environ: environ, Dir: dir})
		b.StopTimer()
		st := m.Status()[0]
		if st.Err != nil || len(st.Tools) == 0 {
			b.Fatalf("start: %+v", st)
		}
		listed += st.Duration
		m.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(listed.Milliseconds())/float64(b.N), "ms-to-tools")
}

// TestMutatingCallsDoNotOverlap: tools without readOnlyHint run one at a
// time; read-only ones do not wait for them.
func TestMutatingCallsDoNotOverlap(t *testing.T) {
	srv, _ := fake(t, "slow", "slow")
	m, _ := start(t, []Server{srv}, Options{CallTimeout: 400 * time.Millisecond})
	wait := toolByName(t, m, "mcp__slow__wait") // never ends: cut by the call timeout
	var wg sync.WaitGroup
	begin := time.Now()
	for range 2 {
		wg.Go(func() { call(t, wait, `{}`) })
	}
	wg.Wait()
	// Two calls of 400 ms each, one after the other.
	if d := time.Since(begin); d < 800*time.Millisecond {
		t.Errorf("two mutating calls took %s together: they overlapped", d)
	}
}

// TestSandboxedServer: under the run's sandbox a stdio server is confined
// as the tools are, so a server tricked into writing outside the workspace
// fails; "sandbox": "off" in its config starts it outside the sandbox.
func TestSandboxedServer(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.ABINetwork {
		testenv.Require(t, fmt.Sprintf("this kernel's Landlock ABI is %d; the test needs %d", abi, sandbox.ABINetwork))
	}
	bin := npmBin(t, "mcp-server-filesystem")
	work, outside := t.TempDir(), t.TempDir()
	sb, _, err := sandbox.New(sandbox.Options{Mode: sandbox.WorkspaceWrite, Cwd: work})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	netsb, err := sb.WithNetwork()
	if err != nil {
		t.Fatal(err)
	}
	// The server may write both directories as far as its own
	// configuration goes; only the sandbox stands in the way.
	servers := []Server{
		{Name: "confined", Command: bin, Args: []string{work, outside}},
		{Name: "net", Command: bin, Args: []string{work, outside}, Sandbox: SandboxNetwork},
		{Name: "free", Command: bin, Args: []string{work, outside}, Sandbox: SandboxOff},
	}
	m, _ := start(t, servers, Options{Dir: work, Confine: sb, ConfineNetwork: netsb})
	for _, st := range m.Status() {
		if st.Err != nil {
			t.Fatalf("%s did not start: %v", st.Name, st.Err)
		}
	}
	for _, c := range []struct {
		server  string
		outside bool // may write outside the workspace
	}{{"confined", false}, {"net", false}, {"free", true}} {
		write := toolByName(t, m, "mcp__"+c.server+"__write_file")
		in := filepath.Join(work, c.server+".txt")
		if res := call(t, write, fmt.Sprintf(`{"path":%q,"content":"in"}`, in)); res.IsError {
			t.Errorf("%s: write in the workspace: %s", c.server, res.Content)
		}
		out := filepath.Join(outside, c.server+".txt")
		res := call(t, write, fmt.Sprintf(`{"path":%q,"content":"out"}`, out))
		_, statErr := os.Stat(out)
		if c.outside && (res.IsError || statErr != nil) {
			t.Errorf("%s: write outside failed: %s (%v)", c.server, res.Content, statErr)
		}
		if !c.outside && (!res.IsError || statErr == nil) {
			t.Errorf("%s: wrote outside the workspace: %s", c.server, res.Content)
		}
	}
}

// Two server tools that map to one awl name are both offered: the second
// gets a hash suffix, and each call reaches its own tool.
func TestToolNameCollision(t *testing.T) {
	srv, _ := fake(t, "tw", "twins")
	m, stderr := start(t, []Server{srv}, Options{})
	st := m.Status()
	if st[0].Err != nil || len(st[0].Tools) != 3 {
		t.Fatalf("status: %+v\n%s", st, stderr)
	}
	second := hashedToolName("tw", "files_read_v2")
	if st[0].Tools[0] != "mcp__tw__files_read_v2" || st[0].Tools[1] != second || !strings.HasPrefix(second, "mcp__tw__files_read_v2_") || len(second) > 64 {
		t.Fatalf("tools: %q", st[0].Tools)
	}
	for name, want := range map[string]string{"mcp__tw__files_read_v2": "I am files.read/v2", second: "I am files_read_v2"} {
		if res := call(t, toolByName(t, m, name), `{}`); res.Content != want {
			t.Errorf("%s: %+v", name, res)
		}
	}
	if strings.Contains(stderr.String(), "skipped") {
		t.Errorf("stderr: %s", stderr)
	}
}

// A server that refuses awl's authorization says what to do: OAuth, awl
// mcp login.
func TestAuthFailureHintsOAuth(t *testing.T) {
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(h.Close)
	for _, srv := range []Server{
		{Name: "hdr", File: "ci.json", URL: h.URL, Headers: map[string]string{"Authorization": "Bearer x-wrong-token"}, secrets: []string{"Bearer x-wrong-token"}},
		{Name: "bare", File: "ci.json", URL: h.URL},
	} {
		m, _ := start(t, []Server{srv}, Options{Timeout: 10 * time.Second})
		err := m.Status()[0].Err
		t.Log(err)
		if err == nil || strings.Contains(err.Error(), "x-wrong-token") || !strings.Contains(err.Error(), "awl mcp login "+srv.Name+" --mcp-config ci.json") {
			t.Errorf("%s: %v", srv.Name, err)
		}
	}
}

// An HTTP 500 on a call reaches the model with its status and what the
// server said, and the server stays.
func TestHTTPCallStatusReachesModel(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "work", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "worked"}}}, nil
	})
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var fail sync.Once
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		failed := false
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			fail.Do(func() {
				failed = true
				http.Error(w, "database is down\x1b[31m", http.StatusInternalServerError)
			})
		}
		if !failed {
			inner.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(h.Close)
	m, stderr := start(t, []Server{{Name: "web", URL: h.URL}}, Options{Timeout: 10 * time.Second})
	tl := toolByName(t, m, "mcp__web__work")
	res := call(t, tl, `{}`)
	if !res.IsError || !strings.Contains(res.Content, "HTTP 500") || !strings.Contains(res.Content, "database is down") || strings.Contains(res.Content, "\x1b") {
		t.Fatalf("result: %q\n%s", res.Content, stderr)
	}
	if res := call(t, tl, `{}`); res.IsError || res.Content != "worked" {
		t.Fatalf("after the 500: %+v", res)
	}
}

// A stdio server's 20 MiB result reaches the model cut, like an HTTP one,
// and the server stays: the next call goes to the same process. Before,
// the SDK's line limit read as "server stopped" and spent the restart.
func TestBigResultKeepsServer(t *testing.T) {
	srv, log := fake(t, "big", "huge")
	m, stderr := start(t, []Server{srv}, Options{})
	res := call(t, toolByName(t, m, "mcp__big__huge"), `{}`)
	if res.IsError || !strings.HasPrefix(res.Content, "BEGIN é\n") || !strings.HasSuffix(res.Content, "END") || !strings.Contains(res.Content, "cut as it was read") {
		t.Fatalf("result: error %v, %d bytes, %q", res.IsError, len(res.Content), res.Content[:min(300, len(res.Content))])
	}
	if ok := call(t, toolByName(t, m, "mcp__big__ok"), `{}`); ok.IsError || ok.Content != "fine" {
		t.Fatalf("the next call: %+v", ok)
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "start "); n != 1 {
		t.Errorf("the server started %d times:\n%s", n, b)
	}
	if !strings.Contains(stderr.String(), "mcp big: a 2") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
