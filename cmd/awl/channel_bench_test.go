package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/awlrun/awl/provider/providertest"
)

// BenchmarkTurn measures one more turn of a session, in process, the two
// ways a caller gets one: a user line on the input channel of one running
// awl (channel), and a new run that continues the session (resume: Main
// with -c, what `awl run --resume` does, less the process start). The
// session grows by one turn an iteration in both. Issue 50's goal: a
// channel turn costs no more than a resumed run's.
func BenchmarkTurn(b *testing.B) {
	b.Run("channel", benchChannelTurn)
	b.Run("resume", benchResumeTurn)
}

// benchSetup points the in-process awl at a fake provider that answers
// every request with a short text, in an empty directory.
func benchSetup(b *testing.B) {
	srv := providertest.New()
	b.Cleanup(srv.Close)
	srv.RespondWith(func(int, providertest.Request) providertest.Response { return providertest.Text("anthropic", "hi") })
	b.Setenv("ANTHROPIC_API_KEY", "k")
	b.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	b.Setenv("AWL_SESSION_DIR", b.TempDir())
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Chdir(b.TempDir())
}

func benchChannelTurn(b *testing.B) {
	benchSetup(b)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"run", "-o", "ndjson", "--input", "ndjson"}, inR, outW, io.Discard)
		outW.Close()
	}()
	events := bufio.NewScanner(outR)
	events.Buffer(make([]byte, 1<<20), 1<<24)
	turn := func() {
		if _, err := io.WriteString(inW, `{"type":"user","text":"hello"}`+"\n"); err != nil {
			b.Fatal(err)
		}
		for events.Scan() {
			if strings.HasPrefix(events.Text(), `{"type":"turn_end"`) {
				return
			}
		}
		b.Fatalf("awl ended before the turn did: %v", events.Err())
	}
	turn() // the first turn creates the session, as the resume case's setup run does
	for b.Loop() {
		turn()
	}
	b.StopTimer()
	inW.Close()
	go io.Copy(io.Discard, outR)
	if c := <-done; c != 0 {
		b.Fatalf("exit %d", c)
	}
}

func benchResumeTurn(b *testing.B) {
	benchSetup(b)
	run := func(args ...string) {
		if c := Main(context.Background(), append([]string{"run", "-o", "ndjson", "--no-stdin"}, args...), strings.NewReader(""), io.Discard, io.Discard); c != 0 {
			b.Fatalf("exit %d", c)
		}
	}
	run("hello")
	for b.Loop() {
		run("-c", "hello")
	}
}
