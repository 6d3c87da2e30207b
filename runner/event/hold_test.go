package event

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// messages is the message of each notice written to b, in order.
func messages(b *bytes.Buffer) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l != "" {
			out = append(out, gjson.Get(l, "message").Str)
		}
	}
	return strings.Join(out, " ")
}

// Events emitted while held are not written; the first one emitted after
// Release waits for the durability it was given, then follows them, in
// order.
func TestHoldThenRelease(t *testing.T) {
	var b bytes.Buffer
	e := NewEmitter(&b, nil)
	notice := func(m string) { e.Emit(Notice{Base: e.Stamp("notice", "s"), Message: m}) }
	notice("before")
	e.Hold()
	notice("one")
	notice("two")
	if got := messages(&b); got != "before" {
		t.Fatalf("written while held: %q", got)
	}
	waited := false
	e.Release(func() error {
		time.Sleep(10 * time.Millisecond)
		waited = true
		return nil
	})
	if got := messages(&b); got != "before" {
		t.Fatalf("written on Release, before the next event: %q", got)
	}
	notice("three")
	if !waited {
		t.Error("the held events were written without waiting for their durability")
	}
	notice("four")
	if got := messages(&b); got != "before one two three four" {
		t.Errorf("written %q, want the held events before the next, in order", got)
	}
}

// When what the held events echo could not be made durable, they are
// dropped: the events after them are still written.
func TestReleaseDropsHeldOnFailure(t *testing.T) {
	var b bytes.Buffer
	e := NewEmitter(&b, nil)
	e.Hold()
	e.Emit(Notice{Base: e.Stamp("notice", "s"), Message: "held"})
	e.Release(func() error { return errors.New("fsync failed") })
	e.Emit(Notice{Base: e.Stamp("notice", "s"), Message: "after"})
	if got := messages(&b); got != "after" {
		t.Errorf("written %q, want only the event after the failed release", got)
	}
}
