package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awlrun/awl/provider/providertest"
)

// children lists the pids of pid's child processes.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// inSession lists the live processes whose session id is sid.
func inSession(sid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:])) // f[0] is field 3, state
		if len(f) > 3 && f[3] == strconv.Itoa(sid) && f[0] != "Z" {
			pid, _ := strconv.Atoi(strings.Split(s, "/")[2])
			out = append(out, pid)
		}
	}
	return out
}

// TestToolDiesWithAwl: after a SIGKILL of awl during `bash sleep 30`, no
// process of the tool survives.
func TestToolDiesWithAwl(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	awl := filepath.Join(tmp, "awl")
	if err := os.Symlink(exe, awl); err != nil {
		t.Fatal(err)
	}
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.ToolCall("anthropic", "c1", "bash", `{"command":"sleep 30"}`), providertest.Text("anthropic", "done"))
	cmd := exec.Command(awl, "run", "--no-stdin", "go")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+srv.URL, "AWL_PROVIDER=anthropic",
		"AWL_SESSION_DIR="+filepath.Join(tmp, "sessions"), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var tool int
	for deadline := time.Now().Add(60 * time.Second); tool == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the tool never started")
		}
		for _, c := range children(cmd.Process.Pid) {
			if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(c) + "/comm"); string(comm) == "sleep\n" {
				tool = c
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The tool runs in its own session, whose id is its first process's.
	var left []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left = inSession(tool); len(left) == 0 {
			return
		}
	}
	t.Fatalf("tool processes %v survived a SIGKILL of awl", left)
}
