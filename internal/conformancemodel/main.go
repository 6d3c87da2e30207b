// Command conformancemodel is the scripted model of the MCP conformance run
// (scripts/mcp-conformance-client.sh). It serves the OpenAI chat API on
// 127.0.0.1 and runs the command after "--" with OPENAI_BASE_URL naming it.
// Its first answer calls every tool the request offers, each with arguments
// made from the tool's schema; every later answer ends the turn with text.
// It exits with the command's exit code.
//
//	conformancemodel -- awl run --provider openai-chat --model fake ...
//
// "conformancemodel browse URL" is the $BROWSER of the OAuth scenarios:
// it follows URL's redirects (the suite's authorization server answers at
// once with one to awl's redirect listener) and prints nothing.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/awlrun/awl/provider/providertest"
)

func main() {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "browse" {
		browse(args[1])
		return
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: conformancemodel -- COMMAND [ARG...]")
		os.Exit(2)
	}
	srv := providertest.New()
	srv.RespondWith(func(n int, req providertest.Request) providertest.Response {
		return answer(req.Body)
	})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL)
	err := cmd.Run()
	srv.Close()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "conformancemodel:", err)
		os.Exit(1)
	}
}

// chatRequest is the part of a chat completions request the model reads.
type chatRequest struct {
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// answer calls every offered tool once, in the first turn; once a tool
// result is in the conversation it answers "done".
func answer(body []byte) providertest.Response {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return providertest.Text("openai-chat", "the request was not JSON: "+err.Error())
	}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			return providertest.Text("openai-chat", "done")
		}
	}
	schemas := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		schemas[t.Function.Name] = t.Function.Parameters
	}
	given := givenCalls()
	var turn providertest.Turn
	for i, t := range req.Tools {
		input := string(arguments(t.Function.Parameters, schemas))
		if a, ok := given[t.Function.Name]; ok {
			input = string(a)
		}
		turn.Calls = append(turn.Calls, providertest.Call{
			ID:    fmt.Sprintf("call_%d", i+1),
			Name:  t.Function.Name,
			Input: input,
		})
	}
	if len(turn.Calls) == 0 {
		turn.Text = "no tools were offered"
	}
	return providertest.Stream("openai-chat", turn)
}

// arguments fills the schema's required properties with values of their
// types: numbers 1, 2, … in property order, strings "x", booleans true. An
// object property whose description asks for "the inputSchema the client
// observed for NAME" gets the parameters of the offered tool NAME (an MCP
// tool's awl name ends in "__NAME") as the request carried them: what the
// model saw, echoed to the suite (json-schema-2020-12-preservation).
func arguments(schema json.RawMessage, schemas map[string]json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s)
	req := append([]string(nil), s.Required...)
	sort.Strings(req)
	args := map[string]any{}
	for i, name := range req {
		typ, _ := s.Properties[name].Type.(string)
		switch typ {
		case "number", "integer":
			args[name] = i + 1
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
			if _, rest, ok := strings.Cut(s.Properties[name].Description, "observed for "); ok && len(strings.Fields(rest)) > 0 {
				target := strings.TrimRight(strings.Fields(rest)[0], ".,;:")
				for tool, params := range schemas {
					if tool == target || strings.HasSuffix(tool, "__"+target) {
						args[name] = params
					}
				}
			}
		default:
			args[name] = "x"
		}
	}
	b, _ := json.Marshal(args)
	return b
}

// browse fetches url as a browser would, following redirects.
func browse(url string) {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformancemodel browse:", err)
		os.Exit(1)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// givenCalls are the arguments a scenario names for its tools
// ($CONFORMANCE_TOOL_CALLS, from the suite's context: [{"name", "arguments"}]),
// by the awl name of each tool (mcp__conformance__NAME).
func givenCalls() map[string]json.RawMessage {
	var calls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	json.Unmarshal([]byte(os.Getenv("CONFORMANCE_TOOL_CALLS")), &calls)
	out := map[string]json.RawMessage{}
	for _, c := range calls {
		if len(c.Arguments) > 0 {
			out["mcp__conformance__"+c.Name] = c.Arguments
		}
	}
	return out
}
