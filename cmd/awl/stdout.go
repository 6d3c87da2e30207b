package main

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// stdoutHurry is how long a write to stdout may still take once a signal
// has arrived before awl gives up on stdout: well inside signalGrace, so
// that the run has the rest of the grace period to append its interrupted
// tool results and its run entry.
const stdoutHurry = 200 * time.Millisecond

// errStdoutStuck is the write error once awl has given up on stdout.
var errStdoutStuck = errors.New("stdout is not being read; output after the signal was dropped")

// signalSafeWriter writes to w from a goroutine of its own, so that a
// write to a stdout nobody reads (`awl run -o ndjson | slow-reader`) holds
// up the run only until a signal: from then on a write that does not end
// within stdoutHurry is abandoned, every later write fails at once, and the
// session gets its ending instead of waiting for a reader that may never
// come. Until a signal, writes block as they always did (backpressure).
type signalSafeWriter struct {
	w      io.Writer
	signal <-chan struct{} // closed on SIGINT or SIGTERM

	mu      sync.Mutex
	start   sync.Once
	jobs    chan []byte
	results chan error
	stuck   atomic.Bool
}

func newSignalSafeWriter(w io.Writer, signal <-chan struct{}) *signalSafeWriter {
	return &signalSafeWriter{w: w, signal: signal}
}

func (s *signalSafeWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stuck.Load() {
		return 0, errStdoutStuck
	}
	s.start.Do(func() {
		s.jobs = make(chan []byte)
		s.results = make(chan error, 1)
		go func() {
			for p := range s.jobs {
				_, err := s.w.Write(p)
				s.results <- err
			}
		}()
	})
	s.jobs <- p
	select {
	case err := <-s.results:
		return writeResult(p, err)
	case <-s.signal:
	}
	t := time.NewTimer(stdoutHurry)
	defer t.Stop()
	select {
	case err := <-s.results:
		return writeResult(p, err)
	case <-t.C:
		// The writing goroutine stays blocked in the write; no job is
		// ever sent to it again.
		s.stuck.Store(true)
		return 0, errStdoutStuck
	}
}

func writeResult(p []byte, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return len(p), nil
}
