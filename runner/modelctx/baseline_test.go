package modelctx

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

func TestBaselineFields(t *testing.T) {
	s := State{
		Cwd: "/w&<x>", Shell: "bash", Date: "2026-04-25", Timezone: "UTC",
		System: "abc", Tools: []string{"read"},
		AgentsMD: []Source{{Path: "/w/AGENTS.md", Content: "rules"}},
	}
	got := string(s.Baseline().Fields())
	want := `{"cwd":"/w&<x>","shell":"bash","date":"2026-04-25","timezone":"UTC",` +
		`"system":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",` +
		`"toolPolicy":"` + digestTools([]string{"read"}) + `",` +
		`"agentsMd":[{"path":"/w/AGENTS.md","digest":"` + digestText("rules") + `"}]}`
	if got != want {
		t.Errorf("Fields =\n%s\nwant\n%s", got, want)
	}
}

func TestBaselineRoundTrip(t *testing.T) {
	off := state()
	off.NoEnv, off.NoAgentsMD = true, true
	for _, s := range []State{state(), off, {}} {
		b := s.Baseline()
		fields := b.Fields()
		if !json.Valid(fields) || bytes.ContainsRune(fields, '\n') {
			t.Fatalf("Fields = %q, want one line of JSON", fields)
		}
		got, err := ParseBaseline(fields)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, b) {
			t.Errorf("round trip = %+v, want %+v", got, b)
		}
		if msgs := Build(s, &got); msgs != nil {
			t.Errorf("Build with the parsed baseline = %s, want nil", dump(msgs))
		}
	}
}

func TestParseBaselineErrors(t *testing.T) {
	for _, in := range []string{``, `null`, `[]`, `"x"`, `{"cwd":1}`, `{"agentsMd":{}}`, `{`} {
		if _, err := ParseBaseline([]byte(in)); err == nil {
			t.Errorf("ParseBaseline(%q) succeeded", in)
		}
	}
}

func TestLastBaseline(t *testing.T) {
	first := state()
	second := state()
	second.Date = "2026-04-26"
	msg := conv.Message{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("hi")}}
	entries := []session.Entry{
		{Type: "message", ID: "00000001", Message: &msg},
		first.Baseline().Entry(),
		{Type: "message", ID: "00000003", Message: &msg},
		second.Baseline().Entry(),
		{Type: "message", ID: "00000005", Message: &msg},
		{Type: "somethingNewer", ID: "00000006", Fields: []byte(`{}`)},
	}
	got, err := LastBaseline(entries)
	if err != nil {
		t.Fatal(err)
	}
	if want := second.Baseline(); got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("LastBaseline = %+v, want the second turn's %+v", got, want)
	}
	if e := first.Baseline().Entry(); e.Type != "turnContext" {
		t.Errorf("entry type = %q", e.Type)
	}

	got, err = LastBaseline(entries[:1])
	if err != nil || got != nil {
		t.Errorf("LastBaseline without turnContext = %+v, %v; want nil, nil", got, err)
	}

	bad := append(entries[:1:1], session.Entry{Type: session.TypeTurnContext, ID: "0000000b", Fields: []byte(`[]`)})
	if _, err := LastBaseline(bad); err == nil {
		t.Error("LastBaseline accepted a malformed turnContext")
	}
}

func FuzzParseBaseline(f *testing.F) {
	f.Add(state().Baseline().Fields())
	f.Add([]byte(`{"off":["environmentContext","agentsMd"],"toolPolicy":"x"}`))
	f.Add([]byte(`{"agentsMd":[{"path":"/a","digest":"b"},{}],"unknown":[1,2]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBaseline(data)
		if err != nil {
			return
		}
		again, err := ParseBaseline(b.Fields())
		if err != nil {
			t.Fatalf("Fields of a parsed baseline does not parse: %v", err)
		}
		if !reflect.DeepEqual(normalize(again), normalize(b)) {
			t.Fatalf("round trip changed %+v into %+v", b, again)
		}
		// Any baseline, however odd, builds without panicking.
		Build(state(), &b)
	})
}

// normalize maps empty slices to nil, which omitempty cannot tell apart.
func normalize(b Baseline) Baseline {
	if len(b.AgentsMD) == 0 {
		b.AgentsMD = nil
	}
	if len(b.Off) == 0 {
		b.Off = nil
	}
	return b
}
