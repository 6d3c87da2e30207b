package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/session"
)

func TestRedactorReplacesExactValues(t *testing.T) {
	r := New([]Secret{
		{"ANTHROPIC_API_KEY", "sk-ant-0123456789"},
		{"LONGER", "prefix-sk-ant-0123456789-suffix"},
		{"SHORT", "abcdefg"},              // 7 bytes: never redacted
		{"EIGHT", "abcdefgh"},             // 8 bytes: redacted
		{"SAME", "sk-ant-0123456789"},     // a value already known keeps its first name
		{"QUOTED", `pa"ss\word-with-esc`}, // occurs escaped in JSON
		{"EMPTY", ""},
	})
	cases := []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"key=sk-ant-0123456789\n", "key=[redacted:ANTHROPIC_API_KEY]\n"},
		{"sk-ant-0123456789sk-ant-0123456789", "[redacted:ANTHROPIC_API_KEY][redacted:ANTHROPIC_API_KEY]"},
		{"x prefix-sk-ant-0123456789-suffix y", "x [redacted:LONGER] y"},
		{"sk-ant-012345678", "sk-ant-012345678"}, // one byte short: not the secret
		{"pin abcdefg and abcdefgh", "pin abcdefg and [redacted:EIGHT]"},
		{`raw pa"ss\word-with-esc`, `raw [redacted:QUOTED]`},
	}
	for _, c := range cases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := r.JSON(`{"command":"echo pa\"ss\\word-with-esc sk-ant-0123456789"}`), `{"command":"echo [redacted:QUOTED] [redacted:ANTHROPIC_API_KEY]"}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
	var nilR *Redactor
	if nilR.String("sk-ant-0123456789") != "sk-ant-0123456789" || nilR.Error(nil) != nil {
		t.Error("a nil Redactor changed something")
	}
}

// A secret written with JSON escapes in a tool input decodes to the
// secret: the decoded value is redacted, and a literal without a secret
// keeps its bytes.
func TestRedactorJSONEscapedSecret(t *testing.T) {
	r := New([]Secret{{"ANTHROPIC_API_KEY", "sk-ant-0123456789"}})
	const red = "[redacted:ANTHROPIC_API_KEY]"
	cases := []struct{ in, want string }{
		{`{"command":"echo \u0073k-ant-0123456789"}`, `{"command":"echo ` + red + `"}`},
		{`{"command":"\u0073\u006B\u002d\u0061nt-0123456789"}`, `{"command":"` + red + `"}`},
		{`{"command":"echo sk\u002dant\/0123456789 sk-ant\u002d0123456789"}`, `{"command":"echo sk-ant/0123456789 ` + red + `"}`},
		{`{"c":"say \"hi\" <b>&\u0073k-ant-0123456789\n"}`, `{"c":"say \"hi\" <b>&` + red + `\n"}`},
		{`{"a":"x\u0041y","b":"sk-ant-0123456789","\u0073k-ant-0123456789":1}`, `{"a":"x\u0041y","b":"` + red + `","` + red + `":1}`},
		{`{"a":["\t", "\u0073k-ant-0123456789"]}`, `{"a":["\t", "` + red + `"]}`},
		// Not JSON: the byte scan alone.
		{`{"c":"\u0073k-ant-0123456789`, `{"c":"\u0073k-ant-0123456789`},
		{`echo \u0073k-ant-0123456789 sk-ant-0123456789`, `echo \u0073k-ant-0123456789 ` + red},
	}
	for _, c := range cases {
		if got := r.JSON(c.in); got != c.want {
			t.Errorf("JSON(%s)\n = %s\nwant %s", c.in, got, c.want)
		}
	}
	e := r.Entry(session.Entry{Type: "message", Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{
		{Type: conv.BlockToolUse, ID: "c1", Name: "bash", Input: `{"command":"echo \u0073k-ant-0123456789"}`},
	}}})
	if got := e.Message.Content[0].Input; got != `{"command":"echo `+red+`"}` {
		t.Errorf("Entry's tool input = %s", got)
	}
}

func TestRedactorEntryCoversEveryTextField(t *testing.T) {
	const key = "sk-SENTINEL-abcdefgh"
	r := New([]Secret{{"OPENAI_API_KEY", key}})
	in := session.Entry{Type: "message", Message: &conv.Message{Role: conv.RoleAssistant, Content: []conv.Block{
		{Type: conv.BlockText, Text: "the key is " + key},
		{Type: conv.BlockThinking, Thinking: "I saw " + key, Signature: "sig"},
		{Type: conv.BlockToolUse, ID: "c1", Name: "bash", Input: `{"command":"echo ` + key + `"}`},
		{Type: conv.BlockToolResult, ToolUseID: "c1", Content: key + "\nexit code: 0"},
	}}}
	out := r.Entry(in)
	for i, b := range out.Message.Content {
		if s := fmt.Sprintf("%+v", b); strings.Contains(s, key) {
			t.Errorf("block %d still holds the key: %s", i, s)
		}
	}
	if out.Message.Content[2].Input != `{"command":"echo [redacted:OPENAI_API_KEY]"}` {
		t.Errorf("input = %s", out.Message.Content[2].Input)
	}
	if !strings.Contains(in.Message.Content[0].Text, key) {
		t.Error("Entry changed the entry it was given")
	}
	ctx := r.Entry(session.Entry{Type: "turnContext", Fields: []byte(`{"env":"` + key + `"}`)})
	if string(ctx.Fields) != `{"env":"[redacted:OPENAI_API_KEY]"}` {
		t.Errorf("fields = %s", ctx.Fields)
	}
}

// TestRedactorFindsEverySecretInNoise builds texts of random noise and
// near misses (secret prefixes and suffixes, and a short secret inside a
// long one) with secrets dropped in, and checks the result against the
// text built with the replacements instead.
func TestRedactorFindsEverySecretInNoise(t *testing.T) {
	secrets := []Secret{
		{"A", "sk-ant-api03-Zq9xW2"},
		{"B", "sk-proj-Zq9xW2abcdefghijklmnopqrstuvwxyz0123456789"},
		{"C", "abcdefgh"}, // 8 bytes: the tail length drops to 8
		{"D", "ghp_0123456789ABCDEFGHIJ"},
	}
	r := New(secrets)
	noise := []string{"a", "b", " ", "\n", "sk-", "sk-ant-api03-", "sk-proj-Zq9xW2abc", "Zq9xW2", "abcdefg", "bcdefgh", "ghp_0123", "ABCDEFGHIJ", "0123456789"}
	rnd := rand.New(rand.NewPCG(3, 4))
	for n := range 2000 {
		var in, want strings.Builder
		last := ""
		for range rnd.IntN(30) {
			if rnd.IntN(4) == 0 {
				sec := secrets[rnd.IntN(len(secrets))]
				in.WriteString(sec.Value)
				want.WriteString("[redacted:" + sec.Name + "]")
				last = ""
				continue
			}
			w := noise[rnd.IntN(len(noise))]
			// Keep noise from completing a secret across its edges.
			if strings.Contains(r.String(last+w), "[redacted") {
				continue
			}
			last = w
			in.WriteString(w)
			want.WriteString(w)
		}
		if got := r.String(in.String()); got != want.String() {
			t.Fatalf("case %d: String(%q)\n= %q\nwant %q", n, in.String(), got, want.String())
		}
	}
	// A secret inside a longer one is replaced as part of the longer one;
	// two that overlap are replaced together, leaving no byte of either.
	r = New([]Secret{{"INNER", "0123456789"}, {"OUTER", "key-0123456789-end"}, {"X", "ABCDEFGH12"}, {"Y", "GH12345678"}})
	for in, want := range map[string]string{
		"[key-0123456789-end]": "[[redacted:OUTER]]",
		"[0123456789]":         "[[redacted:INNER]]",
		"[ABCDEFGH12345678]":   "[[redacted:X]]",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDeltaRedactorAcrossPieces: a secret split across streamed pieces at
// any point, among multi-byte text, never comes out, and what comes out,
// joined, is the whole text redacted; no piece splits a character.
func TestDeltaRedactorAcrossPieces(t *testing.T) {
	const key = "sk-ant-api03-streamed-SECRET-value"
	r := New([]Secret{{"ANTHROPIC_API_KEY", key}, {"GITHUB_TOKEN", "ghp_0123456789abcdef"}})
	full := "héllo → the key is " + key + " and ghp_0123456789abcdef, again " + key + "… done ✓"
	want := r.String(full)
	for i := 0; i <= len(full); i++ {
		for j := i; j <= len(full); j += 7 {
			d := NewStream(r)
			var out []string
			for _, piece := range []string{full[:i], full[i:j], full[j:]} {
				if s := d.Text("text_delta", 0, piece); s != "" {
					out = append(out, s)
				}
			}
			d.Flush(func(kind string, index int, s string) { out = append(out, s) })
			got := strings.Join(out, "")
			if got != want {
				t.Fatalf("cut at %d, %d: got %q, want %q", i, j, got, want)
			}
			for _, s := range out {
				if strings.Contains(s, "SECRET") || strings.Contains(s, "0123456789abcdef") || !utf8.ValidString(s) {
					t.Fatalf("cut at %d, %d: piece %q", i, j, s)
				}
			}
		}
	}
	// Without secrets, pieces pass through as they come.
	d := NewStream(New(nil))
	if s := d.Text("text_delta", 0, "ab"); s != "ab" {
		t.Errorf("no secrets: %q", s)
	}
}

// TestRedactorOverlapNamesTheLongest: where two secrets start at the same
// byte, the longer one names the replacement, whichever was given first
// and whichever the scan found first (the shorter one ends first).
func TestRedactorOverlapNamesTheLongest(t *testing.T) {
	for _, secrets := range [][]Secret{
		{{"PREFIX", "sk-ant-0123456789"}, {"FULL", "sk-ant-0123456789-and-more"}},
		{{"FULL", "sk-ant-0123456789-and-more"}, {"PREFIX", "sk-ant-0123456789"}},
	} {
		r := New(secrets)
		in := "a sk-ant-0123456789-and-more b sk-ant-0123456789 c"
		if got, want := r.String(in), "a [redacted:FULL] b [redacted:PREFIX] c"; got != want {
			t.Errorf("%v: String = %q, want %q", secrets, got, want)
		}
	}
}

// TestStreamFlushOrder: Flush lets out what each stream holds back in the
// order of the content blocks' index, then of the kind of delta.
func TestStreamFlushOrder(t *testing.T) {
	d := NewStream(New([]Secret{{"KEY", "sk-ant-0123456789-abcdefghijklmn"}}))
	for _, k := range []struct {
		kind  string
		index int
	}{{"text_delta", 2}, {"thinking_delta", 0}, {"input_json_delta", 1}, {"text_delta", 0}, {"thinking_delta", 10}} {
		if s := d.Text(k.kind, k.index, fmt.Sprint(k.kind, k.index)); s != "" {
			t.Fatalf("%s %d let %q out: a piece shorter than the secret is held back", k.kind, k.index, s)
		}
	}
	var got []string
	d.Flush(func(kind string, index int, text string) { got = append(got, fmt.Sprint(index, kind, "=", text)) })
	want := "0text_delta=text_delta0 0thinking_delta=thinking_delta0 1input_json_delta=input_json_delta1 2text_delta=text_delta2 10thinking_delta=thinking_delta10"
	if strings.Join(got, " ") != want {
		t.Errorf("Flush order:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestStreamFlushRedactsWhatItHeldBack: with two secrets of different
// lengths, a whole short secret at the end of a stream lies within what
// is held back for the long one, and Flush, which lets it out, must
// redact it.
func TestStreamFlushRedactsWhatItHeldBack(t *testing.T) {
	const long, short = "sk-ant-api03-a-long-secret-value-0123456789", "ghp_short123"
	d := NewStream(New([]Secret{{"LONG", long}, {"SHORT", short}}))
	var out strings.Builder
	out.WriteString(d.Text("text_delta", 0, "the token is "))
	out.WriteString(d.Text("text_delta", 0, short))
	d.Flush(func(kind string, index int, text string) { out.WriteString(text) })
	if got, want := out.String(), "the token is [redacted:SHORT]"; got != want {
		t.Errorf("stream let out %q, want %q", got, want)
	}
}

// TestStreamDropVoidsHeldBackText: a retried request streams its answer
// from the start, so what the failed attempt's stream held back is voided:
// neither the next piece nor Flush lets it out.
func TestStreamDropVoidsHeldBackText(t *testing.T) {
	d := NewStream(New([]Secret{{"KEY", "sk-ant-0123456789-abcdefghijklmn"}}))
	if s := d.Text("text_delta", 0, "failed attempt"); s != "" {
		t.Fatalf("a piece shorter than the secret was let out: %q", s)
	}
	d.Drop()
	var out strings.Builder
	out.WriteString(d.Text("text_delta", 0, "retry "))
	d.Flush(func(kind string, index int, text string) { out.WriteString(text) })
	if got := out.String(); got != "retry " {
		t.Errorf("after Drop the stream let out %q, want only the retry's text", got)
	}
}

// TestRedactorFindsPredictableEncodings: the forms of a secret a program
// prints without being asked to hide it (a URL, a JSON file, a Basic
// Authorization header, whatever the user name) are redacted too, in
// plain text and in JSON.
func TestRedactorFindsPredictableEncodings(t *testing.T) {
	const secret = `p@ss w0rd/+"seCret"&=ok`
	r := New([]Secret{{"PASS", secret}})
	basic := func(user string) string { return base64.StdEncoding.EncodeToString([]byte(user + ":" + secret)) }
	for _, in := range []string{
		"https://u:" + url.QueryEscape(secret) + "@example.com/",
		"https://example.com/" + url.PathEscape(secret) + "/x",
		`{"password": "p@ss w0rd/+\"seCret\"&=ok"}`,
		"Authorization: Basic " + basic("ci-bot"),
		"Authorization: Basic " + basic("ab"),
		"Authorization: Basic " + basic("a"),
		"Authorization: Basic " + basic(""),
		base64.URLEncoding.EncodeToString([]byte("x" + secret + "tail")),
		base64.RawStdEncoding.EncodeToString([]byte(secret)),
	} {
		got := r.String(in)
		if !strings.Contains(got, "[redacted:PASS]") {
			t.Errorf("String(%q) = %q: not redacted", in, got)
		}
		if gj := r.JSON(`{"out":` + strconv.Quote(in) + `}`); !strings.Contains(gj, "[redacted:PASS]") {
			t.Errorf("JSON of %q = %s: not redacted", in, gj)
		}
		// What is left of the encoding tells nothing of the secret: at
		// most the two characters base64 shares with the bytes around it.
		for _, dec := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			for k := range 3 {
				b := dec.EncodeToString(append(make([]byte, k), secret...))
				if core := b[len(b)/2-3 : len(b)/2+3]; strings.Contains(got, core) {
					t.Errorf("String(%q) = %q still holds %q of its encoding", in, got, core)
				}
			}
		}
	}
	// Ordinary text, and base64 of other data, are left alone.
	for _, in := range []string{"p@ss w0rd", base64.StdEncoding.EncodeToString([]byte("user:another-password")), "hello world"} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
}

// TestRedactorEntryCoversNamesAndIDs: a tool name and a call id are the
// model's to choose, so they hold a secret as easily as a text; a call
// and its result stay paired, their ids redacted alike. Opaque provider
// data is left as it is.
func TestRedactorEntryCoversNamesAndIDs(t *testing.T) {
	const key = "sk-SENTINEL-abcdefgh"
	r := New([]Secret{{"KEY", key}})
	in := session.Entry{Type: "message", Provider: key, Model: key, Message: &conv.Message{Role: conv.RoleAssistant, Model: key, Provider: key,
		StopReason: conv.StopReason(key), Content: []conv.Block{
			{Type: conv.BlockToolUse, ID: "call-" + key, Name: key, Input: `{}`},
			{Type: conv.BlockToolResult, ToolUseID: "call-" + key, Content: "x"},
			{Type: conv.BlockThinking, Thinking: "t", Signature: "sig-" + key, ItemID: key},
		}}}
	out := r.Entry(in)
	if s := fmt.Sprintf("%+v %+v", out, *out.Message); strings.Count(s, key) != 1 || !strings.Contains(s, "sig-"+key) {
		t.Errorf("the entry holds the key elsewhere than in the signature: %s", s)
	}
	if u, res := out.Message.Content[0], out.Message.Content[1]; u.Name != "[redacted:KEY]" || u.ID != res.ToolUseID || u.ID != "call-[redacted:KEY]" {
		t.Errorf("tool use %+v, result %+v", u, res)
	}
}

// TestRedactorAdd: a secret added while the redactor is in use (an OAuth
// token obtained during the run) is redacted from then on, by the
// redactor and by a stream made before it was added, while other
// goroutines redact.
func TestRedactorAdd(t *testing.T) {
	r := New([]Secret{{"KEY", "sk-ant-0123456789"}})
	d := NewStream(r)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				r.String("sk-ant-0123456789 and tok-access-abcdef0123")
			}
		})
	}
	r.Add(Secret{"MCP_CREDENTIAL", "tok-access-abcdef0123"})
	wg.Wait()
	if got := r.String("a tok-access-abcdef0123 b"); got != "a [redacted:MCP_CREDENTIAL] b" {
		t.Errorf("String = %q", got)
	}
	var out strings.Builder
	out.WriteString(d.Text("text_delta", 0, "tok-access-"))
	out.WriteString(d.Text("text_delta", 0, "abcdef0123 done"))
	d.Flush(func(_ string, _ int, s string) { out.WriteString(s) })
	if got := out.String(); got != "[redacted:MCP_CREDENTIAL] done" {
		t.Errorf("stream = %q", got)
	}
	var zero Redactor
	zero.Add(Secret{"X", "0123456789"})
	if zero.String("0123456789") != "[redacted:X]" {
		t.Error("the zero Redactor did not take a secret")
	}
}
