package provider

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider/providertest"
)

// wireNames has one provider per wire API: the tests that exercise a wire
// format (providertest renders streams by these names) run over them.
var wireNames = []string{NameAnthropic, NameOpenAI, NameOpenAIChat}

func TestWireNamesCoverEveryWire(t *testing.T) {
	var wires []Wire
	for _, n := range wireNames {
		s, ok := Lookup(n)
		if !ok {
			t.Fatalf("%s is not in the registry", n)
		}
		wires = append(wires, s.Wire)
	}
	for _, s := range Specs() {
		if !slices.Contains(wires, s.Wire) {
			t.Errorf("%s speaks %s, which no wire test covers", s.Name, s.Wire)
		}
	}
}

// TestRegistryComplete holds every entry to what the CLI relies on.
func TestRegistryComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Specs() {
		t.Run(s.Name, func(t *testing.T) {
			if s.Name == "" || s.Name != strings.ToLower(s.Name) || strings.ContainsAny(s.Name, " ,") {
				t.Errorf("bad name %q", s.Name)
			}
			if seen[s.Name] {
				t.Errorf("%s is listed twice", s.Name)
			}
			seen[s.Name] = true
			if s.KeyVar == "" || s.KeyFileVar != s.KeyVar+"_FILE" {
				t.Errorf("key variables %q, %q: want NAME and NAME_FILE", s.KeyVar, s.KeyFileVar)
			}
			if s.BaseURLVar == "" || !strings.HasSuffix(s.BaseURLVar, "_BASE_URL") {
				t.Errorf("base URL variable %q", s.BaseURLVar)
			}
			if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Errorf("default base URL %q", s.BaseURL)
			}
			if strings.HasSuffix(s.BaseURL, "/") {
				t.Errorf("default base URL %q ends in a slash", s.BaseURL)
			}
			if s.DefaultModel == "" || DefaultModel(s.Name) != s.DefaultModel || DefaultBaseURL(s.Name) != s.BaseURL {
				t.Errorf("default model %q", s.DefaultModel)
			}
			if s.KeylessWithBaseURL && !s.KeyRequired {
				t.Error("KeylessWithBaseURL only relaxes KeyRequired")
			}
			if !slices.Contains(SecretVars(), s.KeyVar) {
				t.Errorf("SecretVars lacks %s", s.KeyVar)
			}
			for _, v := range s.MoreSecretVars {
				if !slices.Contains(SecretVars(), v) {
					t.Errorf("SecretVars lacks %s", v)
				}
			}
			p, err := New(s.Name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != s.Name {
				t.Errorf("Name() = %q", p.Name())
			}
			body, err := EncodeRequest(s.Name, hello)
			if err != nil || !strings.Contains(string(body), `"model":"`+s.DefaultModel+`"`) {
				t.Errorf("Project: %s, %v", body, err)
			}
		})
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup found an unknown name")
	}
	_, err := New("nope", Options{})
	if err == nil || !strings.Contains(err.Error(), strings.Join(Names(), ", ")) {
		t.Errorf("unknown provider error = %v", err)
	}
}

func TestSecretVarsOnce(t *testing.T) {
	vars := SecretVars()
	for i, v := range vars {
		if slices.Contains(vars[i+1:], v) {
			t.Errorf("%s listed twice", v)
		}
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENROUTER_API_KEY", "OLLAMA_API_KEY"} {
		if !slices.Contains(vars, want) {
			t.Errorf("SecretVars lacks %s", want)
		}
	}
	// anthropic, then openai, are tried first; presets may follow.
	if got := AutoKeyVars(); len(got) < 2 || got[0] != "ANTHROPIC_API_KEY" || got[1] != "OPENAI_API_KEY" || !slices.Contains(got, "OPENROUTER_API_KEY") {
		t.Errorf("AutoKeyVars = %v", got)
	}
}

// TestPresets is the one test the OpenAI-compatible presets need: each
// speaks Chat Completions at its base URL, sends its key when set, and gets
// back the reasoning_content it sent (and only it).
func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		name, base, model string
		keyRequired       bool
	}{
		{NameOpenRouter, "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-5.5", true},
		{NameOllama, "http://localhost:11434/v1", "gpt-oss:20b", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := Lookup(tc.name)
			if !ok || s.Wire != WireChat || s.BaseURL != tc.base || s.DefaultModel != tc.model || s.KeyRequired != tc.keyRequired {
				t.Fatalf("spec = %+v", s)
			}
			p, err := New(tc.name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.(*client).url; got != tc.base+"/chat/completions" {
				t.Errorf("url = %s", got)
			}
			for _, key := range []string{"", "k-123"} {
				srv := providertest.New()
				srv.Enqueue(providertest.Text(NameOpenAIChat, "hi"))
				p, err := New(tc.name, Options{APIKey: key, BaseURL: srv.URL + "/"})
				if err != nil {
					t.Fatal(err)
				}
				msg, err := p.Stream(context.Background(), hello, nil)
				srv.Close()
				if err != nil || msg.Text() != "hi" {
					t.Fatalf("key %q: %q, %v", key, msg.Text(), err)
				}
				req := srv.Requests()[0]
				if req.Path != "/chat/completions" {
					t.Errorf("path = %s", req.Path)
				}
				auth := req.Header.Get("Authorization")
				if (key == "" && auth != "") || (key != "" && auth != "Bearer "+key) {
					t.Errorf("key %q: Authorization %q", key, auth)
				}
				if !strings.Contains(string(req.Body), `"model":"`+tc.model+`"`) {
					t.Errorf("body lacks the default model: %s", req.Body)
				}
			}

			// reasoning_content goes back to the provider that sent it.
			think := Request{Messages: []conv.Message{
				{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("q")}},
				{Role: conv.RoleAssistant, Provider: tc.name, Content: []conv.Block{
					{Type: conv.BlockThinking, Thinking: "mull", ItemID: reasoningContentID}, conv.TextBlock("a")}},
				{Role: conv.RoleUser, Content: []conv.Block{conv.TextBlock("q2")}},
			}}
			for _, other := range []string{tc.name, NameOpenAIChat} {
				body, err := EncodeRequest(other, think)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := strings.Contains(string(body), `"reasoning_content":"mull"`), other == tc.name; got != want {
					t.Errorf("sent to %s: reasoning_content %v, want %v", other, got, want)
				}
			}
		})
	}
}

// TestStatusTextEveryStatus: no error reads "anthropic:  (529)".
func TestStatusTextEveryStatus(t *testing.T) {
	for code := 100; code <= 999; code++ {
		if StatusText(code) == "" {
			t.Fatalf("status %d has no text", code)
		}
		e := &Error{Provider: NameAnthropic, Status: code, Message: "m"}
		if s := e.Error(); strings.Contains(s, "  ") || strings.Contains(s, ": (") {
			t.Fatalf("status %d: %q", code, s)
		}
	}
	for code, want := range map[int]string{529: "Overloaded", 503: "Service Unavailable", 599: "Server Error", 499: "Client Closed Request", 450: "Client Error"} {
		if got := StatusText(code); got != want {
			t.Errorf("StatusText(%d) = %q, want %q", code, got, want)
		}
	}
	if got := (&Error{Provider: NameAnthropic, Status: 529, Message: "Overloaded"}).Error(); got != "anthropic: Overloaded (529): Overloaded" {
		t.Errorf("529 error = %q", got)
	}
}

// TestFamily: openai-chat serves OpenAI's model names; every other
// provider its own, whatever the case and spaces of the name.
func TestFamily(t *testing.T) {
	for name, want := range map[string]string{"openai-chat": "openai", " OpenAI-Chat ": "openai", "openai": "openai", "anthropic": "anthropic", "ollama": "ollama", "no-such": "no-such"} {
		if got := Family(name); got != want {
			t.Errorf("Family(%q) = %q, want %q", name, got, want)
		}
	}
}
