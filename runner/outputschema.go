package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonschema"
)

// ReasonSchema is the result reason of a run whose final answer never
// matched --output-schema (exit 7).
const ReasonSchema = "schema_invalid"

// DefaultSchemaRetries is --schema-retries' default.
const DefaultSchemaRetries = 2

// OutputSchema is a compiled JSON Schema (draft 2020-12 unless it says
// otherwise) that the final answer must validate against.
type OutputSchema struct {
	// Raw is the schema as compact JSON, key order kept: what the session
	// records and the request carries.
	Raw json.RawMessage
	sch *jsonschema.Schema
}

// CompileOutputSchema parses and compiles a JSON Schema. The error says what
// is wrong with it. A schema is one self-contained document: a $ref to
// another file or URL is refused, never fetched.
func CompileOutputSchema(data []byte) (*OutputSchema, error) {
	sch, err := jsonschema.Compile(data)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return &OutputSchema{Raw: buf.Bytes(), sch: sch}, nil
}

// Validate parses answer as one JSON value (a single ```json fence around
// it is tolerated) and validates it. It returns the value as compact JSON,
// or the problems found, one line each.
func (s *OutputSchema) Validate(answer string) (json.RawMessage, []string) {
	text := unfence(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(answer), "\ufeff")))
	if text == "" {
		return nil, []string{"the answer is empty; it must be one JSON value"}
	}
	v, err := jsonschema.Unmarshal([]byte(text))
	if err != nil {
		return nil, []string{"the answer is not one JSON value: " + err.Error()}
	}
	if ps := s.sch.Validate(v); len(ps) > 0 {
		return nil, problemLines(ps)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return nil, []string{"the answer is not one JSON value: " + err.Error()}
	}
	return buf.Bytes(), nil
}

// unfence strips one Markdown code fence that wraps the whole text.
func unfence(t string) string {
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	body := t[3 : len(t)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 || strings.ContainsAny(body[:nl], " {[\"") {
		return t
	}
	body = body[nl+1:]
	if strings.Contains(body, "```") {
		return t
	}
	return strings.TrimSpace(body)
}

// problemLines shows problems as "/location: what" lines, without
// repeats, at most 20 of them.
func problemLines(ps []jsonschema.Problem) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range ps {
		line := p.String()
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	const maxProblems = 20
	if len(out) > maxProblems {
		out = append(out[:maxProblems], fmt.Sprintf("… and %d more", len(out)-maxProblems))
	}
	return out
}

// schemaGate is --output-schema as a gate.
type schemaGate struct {
	schema  *OutputSchema
	retries int
}

func (g schemaGate) Spec() GateSpec {
	return GateSpec{Name: "output-schema", Retries: g.retries, ExitCode: ExitSchema, Reason: ReasonSchema}
}

func (g schemaGate) Check(_ context.Context, msg conv.Message) Verdict {
	v, problems := g.schema.Validate(msg.Text())
	if problems == nil {
		return Verdict{Pass: true, Value: v}
	}
	return Verdict{
		Feedback: "Your answer did not match the output schema:\n" + bulletList(problems) +
			"\nReply with only the corrected JSON value, with no other text.",
		Problems: problems,
	}
}

func bulletList(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	return b.String()
}

// schemaText is the schema in force as the context fragment shows it.
func (r *run) schemaText() string {
	if r.schema == nil {
		return ""
	}
	return string(r.schema.Raw)
}
