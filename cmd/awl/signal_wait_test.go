package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/awlrun/awl/provider/providertest"
)

// readSignal is a stdin that reports its first Read.
type readSignal struct{ read chan struct{} }

func (r *readSignal) Read(p []byte) (int, error) {
	select {
	case <-r.read:
	default:
		close(r.read)
	}
	return copy(p, "prompt"), io.EOF
}

// TestRunWaitsForSignalsBeforeStdin: signalContext asks for SIGINT and
// SIGTERM in a goroutine, so a run must wait for that before it does
// anything a signal should end cleanly: reading stdin, creating a session.
// The test holds the wait open (a context whose channel is not closed)
// and checks that neither happens until it is released.
func TestRunWaitsForSignalsBeforeStdin(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Enqueue(providertest.Text("anthropic", "ok"))
	srv.Enqueue(providertest.Text("anthropic", "ok"))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Chdir(t.TempDir())

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"stdin", []string{"run", "--stdin", "-o", "json"}},
		{"no stdin", []string{"run", "--no-stdin", "-o", "json", "hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sessions := t.TempDir()
			t.Setenv("AWL_SESSION_DIR", sessions)
			gate := make(chan struct{})
			ctx := context.WithValue(context.Background(), signalsKey{}, gate)
			in := &readSignal{read: make(chan struct{})}
			done := make(chan int, 1)
			var out, errb bytes.Buffer
			go func() { done <- mainAt(ctx, time.Now(), tc.args, in, &out, &errb) }()
			time.Sleep(200 * time.Millisecond)
			select {
			case <-in.read:
				t.Fatal("stdin was read before the signals were caught")
			case c := <-done:
				t.Fatalf("the run ended (exit %d) before the signals were caught: %s", c, errb.String())
			default:
			}
			if files, _ := filepath.Glob(filepath.Join(sessions, "*", "*")); len(files) > 0 {
				t.Fatalf("a session was created before the signals were caught: %v", files)
			}
			close(gate)
			if c := <-done; c != 0 {
				t.Fatalf("exit %d: %s", c, errb.String())
			}
		})
	}
}

// TestRunWithoutInputWaitsOnlyToCreate: a run that reads neither stdin
// nor a named file waits for its signal handlers only before it creates
// its session, so that the thread they start on comes up while the run
// sets up: while the wait is held, the run gets as far as opening its
// connection to the provider, and creates nothing and sends nothing.
func TestRunWithoutInputWaitsOnlyToCreate(t *testing.T) {
	var conns, requests atomic.Int32
	body := providertest.Text("anthropic", "ok").Body
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	sessions := t.TempDir()
	t.Setenv("AWL_SESSION_DIR", sessions)
	t.Chdir(t.TempDir())

	gate := make(chan struct{})
	ctx := context.WithValue(context.Background(), signalsKey{}, gate)
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() {
		done <- mainAt(ctx, time.Now(), []string{"run", "--no-stdin", "-o", "json", "hi"}, &readSignal{read: make(chan struct{})}, &out, &errb)
	}()
	for deadline := time.Now().Add(5 * time.Second); conns.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no connection to the provider while the signals were awaited: the run waited before setting up")
		}
	}
	time.Sleep(50 * time.Millisecond)
	select {
	case c := <-done:
		t.Fatalf("the run ended (exit %d) before the signals were caught: %s", c, errb.String())
	default:
	}
	if files, _ := filepath.Glob(filepath.Join(sessions, "*", "*")); len(files) > 0 || requests.Load() > 0 {
		t.Fatalf("before the signals were caught: session files %v, %d requests", files, requests.Load())
	}
	close(gate)
	if c := <-done; c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	if requests.Load() != 1 {
		t.Fatalf("%d requests, want 1", requests.Load())
	}
}

// TestAwaitSignals: once the wait returns, SIGTERM cancels the context
// instead of ending the process (without the wait it would end this test
// binary most times); a context signalContext did not make does not wait.
func TestAwaitSignals(t *testing.T) {
	awaitSignals(context.Background())
	ctx, stop := signalContext(context.Background(), false)
	defer stop()
	awaitSignals(ctx)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	var se SignalError
	if !errors.As(context.Cause(ctx), &se) || se.Sig != syscall.SIGTERM {
		t.Fatalf("cause %v, want SIGTERM's SignalError", context.Cause(ctx))
	}
}
