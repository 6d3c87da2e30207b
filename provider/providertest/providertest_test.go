package providertest

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestQueueAndRecord(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Response{Body: []byte("data: one\n\n"), ChunkSize: 3},
		Response{Status: 429, Header: http.Header{"Retry-After": {"2"}}, Body: []byte(`{"error":{"message":"slow down"}}`)})
	resp, body := post(t, s.URL+"/v1/messages", `{"a":1}`)
	if resp.StatusCode != 200 || body != "data: one\n\n" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("first answer: %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	resp, body = post(t, s.URL+"/x", `{"b":2}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || !strings.Contains(body, "slow down") {
		t.Errorf("second answer: %d %q", resp.StatusCode, body)
	}
	resp, body = post(t, s.URL+"/x", `{}`)
	if resp.StatusCode != 400 || !strings.Contains(body, "no response queued for request 3") {
		t.Errorf("empty queue: %d %q", resp.StatusCode, body)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[0].Path != "/v1/messages" || string(reqs[1].Body) != `{"b":2}` || reqs[0].Method != "POST" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestStallReleasedByClose(t *testing.T) {
	s := New()
	s.Enqueue(Response{Body: []byte("data: x\n\n"), Stall: true, StallAfter: 4})
	done := make(chan string)
	go func() {
		resp, err := http.Post(s.URL, "application/json", strings.NewReader("{}"))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond) // wait for the request to arrive
	}
	s.Close()
	if got := <-done; got != "data" && !strings.Contains(got, "EOF") {
		t.Errorf("stalled body = %q, want the 4 bytes before the stall", got)
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "provider"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, "provider", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.sse", "data: [DONE]\n\n")
	write("2.json", `{"error":{"message":"nope"}}`)
	write("2.status", "503\n")
	write("2.headers", "Retry-After-Ms: 10\nX-Should-Retry: true\n")
	s := NewDir(dir)
	defer s.Close()
	resp, body := post(t, s.URL+"/v1/chat/completions", `{"n":1}`)
	if resp.StatusCode != 200 || body != "data: [DONE]\n\n" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("1: %d %q", resp.StatusCode, body)
	}
	resp, body = post(t, s.URL+"/v1/chat/completions", `{"n":2}`)
	if resp.StatusCode != 503 || body != `{"error":{"message":"nope"}}` || resp.Header.Get("Retry-After-Ms") != "10" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("2: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = post(t, s.URL+"/v1/chat/completions", `{"n":3}`)
	if resp.StatusCode != 400 || !strings.Contains(body, "no response queued for request 3") {
		t.Errorf("3: %d %q", resp.StatusCode, body)
	}
	for n, want := range map[string]string{"1.json": `{"n":1}`, "2.json": `{"n":2}`, "3.json": `{"n":3}`, "1.path": "/v1/chat/completions\n"} {
		b, err := os.ReadFile(filepath.Join(dir, "requests", n))
		if err != nil || string(b) != want {
			t.Errorf("requests/%s = %q, %v; want %q", n, b, err, want)
		}
	}
}
