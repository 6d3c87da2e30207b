package session

import (
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

func TestAssistantCostRoundTrips(t *testing.T) {
	st := testStore(t)
	s, err := st.Create("/w", "p", "m")
	if err != nil {
		t.Fatal(err)
	}
	cost := 0.0123456789
	mustAppend(t, s, Entry{Provider: "anthropic", Model: "claude", Message: userMsg("hi")})
	mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("ok")},
		Usage: &conv.Usage{Input: 10, Output: 2}, CostUSD: &cost}})
	mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{conv.TextBlock("no price")}}})
	s.Close()
	data := string(readFile(t, s.Path))
	if !strings.Contains(data, `"usage":{"input":10,"output":2},"costUsd":0.0123456789}}`) {
		t.Errorf("costUsd not written after usage, at the end of the message:\n%s", data)
	}
	if strings.Count(data, "costUsd") != 1 {
		t.Errorf("an unknown cost was written:\n%s", data)
	}
	for _, load := range []func(string) (*Session, error){Load, Open} {
		got, err := load(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		m := got.Entries[1].Message
		if m.CostUSD == nil || *m.CostUSD != cost {
			t.Errorf("cost read back as %v", m.CostUSD)
		}
		if got.Entries[2].Message.CostUSD != nil {
			t.Error("a message without costUsd read back with one")
		}
		got.Close()
	}
}

func TestCostUsdOfTheWrongTypeIsCorrupt(t *testing.T) {
	var e Entry
	d := decoder{data: []byte(`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-04-25T17:40:15.990Z","message":{"role":"assistant","content":[],"costUsd":"1"}}`), copyStrings: true}
	if _, err := d.line(nil, &e); err == nil || !strings.Contains(err.Error(), "message.costUsd") {
		t.Errorf("err = %v", err)
	}
	d = decoder{data: []byte(`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-04-25T17:40:15.990Z","message":{"role":"assistant","content":[],"costUsd":null}}`), copyStrings: true}
	if _, err := d.line(nil, &e); err != nil || e.Message.CostUSD != nil {
		t.Errorf("null costUsd: err = %v, cost %v", err, e.Message.CostUSD)
	}
}
