// Package event is awl's NDJSON event stream: every event type, the
// emitter that writes them one whole line at a time, and the JSON Schema
// they validate against (awl schema events).
package event

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/awlrun/awl/internal/jsonstr"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// SchemaVersion is the version of the NDJSON event schema, carried on
// the session event. It changes only when an existing field changes meaning
// or disappears; new fields and event types are additive.
const SchemaVersion = 1

// Base is the part every event has.
type Base struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Timestamp string `json:"timestamp"`
}

// Session is the first event of a run.
type Session struct {
	Base
	Schema   int    `json:"schema"`
	Path     string `json:"path"`
	Cwd      string `json:"cwd"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Resumed  bool   `json:"resumed"`
	// Fork is where a session made with --fork came from; absent for any
	// other.
	Fork *ForkOrigin `json:"forked_from,omitempty"`
	// Stdin says what became of standard input: "read", "empty",
	// "timeout" (nothing arrived within --stdin-timeout), "terminal" or
	// "off".
	Stdin string `json:"stdin"`
	// Recovered is set when opening the session removed a torn last line.
	Recovered bool     `json:"recovered,omitempty"`
	Tools     []string `json:"tools"`
	// Sandbox says how tools are confined (--sandbox).
	Sandbox Sandbox `json:"sandbox"`
	// MCP reports each configured MCP server's start.
	MCP []MCPServer `json:"mcp,omitempty"`
}

// ForkOrigin is the session a fork was made from and the entry it was
// forked at (that session's leaf).
type ForkOrigin struct {
	ID      string `json:"id"`
	EntryID string `json:"entry_id"`
}

// Entry echoes one appended session line after it is durable.
type Entry struct {
	Base
	Entry json.RawMessage `json:"entry"`
	// Stored says Entry is a line as the session wrote it, so valid JSON:
	// the emitter does not check it again (a second pass over a 50 MB
	// prompt's line).
	Stored bool `json:"-"`
}

// PartsWriter is a writer that takes one event line in pieces, which
// together are the line, its newline included. The emitter writes an entry
// event to one as the event's head, the session line itself and the tail,
// so a 50 MB prompt's line is not copied into an event of its own.
type PartsWriter interface {
	WriteParts(parts ...[]byte) error
}

// Join is the line that parts make, for a PartsWriter that needs it whole.
func Join(parts ...[]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// ToolStart says a tool call started.
type ToolStart struct {
	Base
	Name   string          `json:"name"`
	CallID string          `json:"call_id"`
	Input  json.RawMessage `json:"input"`
}

// ToolEnd says a tool call ended.
type ToolEnd struct {
	Base
	Name       string `json:"name"`
	CallID     string `json:"call_id"`
	DurationMS int64  `json:"duration_ms"`
	IsError    bool   `json:"is_error"`
	Denied     bool   `json:"denied,omitempty"`
	// ExitCode is a bash command's exit code; absent for other tools and
	// for a command killed before it exited.
	ExitCode *int `json:"exit_code,omitempty"`
	// OutputBytes is the size of the result's text as the tool returned
	// it (for a refused call, of the refusal).
	OutputBytes int `json:"output_bytes"`
}

// Retry says a provider request is being retried.
type Retry struct {
	Base
	Attempt int    `json:"attempt"`
	Status  int    `json:"status"`
	WaitMS  int64  `json:"wait_ms"`
	Error   string `json:"error"`
}

// Delta is a streamed text or thinking delta (with --stream).
type Delta struct {
	Base
	Index int    `json:"index"`
	Text  string `json:"text"`
}

// Usage is token usage in events.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
}

// Denial is a tool call that was refused by the tool policy.
type Denial struct {
	Name   string `json:"name"`
	CallID string `json:"call_id"`
	// Rule is the rule that denied the call, as written; absent when no
	// allow rule matched or the call could not be judged.
	Rule string `json:"rule,omitempty"`
	// Hook is the pre-tool hook (--tool-hook) that denied the call.
	Hook string `json:"hook,omitempty"`
	// Reason says why.
	Reason string `json:"reason,omitempty"`
}

// ToolDenied says the tool policy refused a call to an offered tool: the
// rule that decided (absent when no allow rule matched) and why.
type ToolDenied struct {
	Base
	Name   string `json:"name"`
	CallID string `json:"call_id"`
	Rule   string `json:"rule,omitempty"`
	Hook   string `json:"hook,omitempty"`
	Reason string `json:"reason"`
}

// Result is always the last event, on success and failure alike.
type Result struct {
	Base
	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason"`
	Text     string `json:"text"`
	Turns    int    `json:"turns"`
	Usage    Usage  `json:"usage"`
	// CostUSD is null when the cost is not known (a model without a
	// price); never an estimate.
	CostUSD *float64 `json:"cost_usd"`
	// CacheReadShare is the share of this run's input read from the
	// prompt cache (cache reads over all input tokens); null without
	// input.
	CacheReadShare *float64 `json:"cache_read_share"`
	ToolCalls      int      `json:"tool_calls"`
	Denied         []Denial `json:"denied"`
	DurationMS     int64    `json:"duration_ms"`
	SessionPath    string   `json:"session_path,omitempty"`
	Error          string   `json:"error,omitempty"`
	// Structured is the final answer as parsed JSON, with --output-schema.
	Structured json.RawMessage `json:"structured,omitempty"`
	// Problems is what a gate still rejected when the run ended on it.
	Problems []string `json:"problems,omitempty"`
	// Checks is each --check command's last exit code and how many times
	// it ran; absent without --check.
	Checks []CheckResult `json:"checks,omitempty"`
}

// Notice tells the user something changed in how the run proceeds
// (a server rejected native structured output, say). It changes nothing
// the model sees.
type Notice struct {
	Base
	Message string `json:"message"`
}

// Prune reports a prune boundary: from here on, requests show the tool
// results up to UpToID as short stubs. The log keeps them whole.
type Prune struct {
	Base
	UpToID       string `json:"up_to_id"`
	TokensBefore int64  `json:"tokens_before"`
	TokensAfter  int64  `json:"tokens_after"`
}

// Compaction reports a compaction: the model summarised the
// conversation, and requests now start from the summary.
type Compaction struct {
	Base
	// Reason is "threshold" (the window passed --compact-at), "overflow"
	// (the API answered that the prompt is too long) or "manual" (awl
	// sessions compact).
	Reason           string `json:"reason"`
	TokensBefore     int64  `json:"tokens_before"`
	TokensAfter      int64  `json:"tokens_after"`
	FirstKeptEntryID string `json:"first_kept_entry_id"`
	DurationMS       int64  `json:"duration_ms"`
}

// Control answers a control message that carried an id (awl run --input
// ndjson): Status is "accepted" or "refused", Reason says why a message
// was refused.
type Control struct {
	Base
	ID     string `json:"id"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// TurnEnd says a turn of a run over the input channel is over, the run
// waiting for the next message (awl run --input ndjson): Text is its
// answer, empty when an interrupt message ended it (Interrupted).
type TurnEnd struct {
	Base
	Text        string `json:"text"`
	Interrupted bool   `json:"interrupted"`
}

// InputError reports an input line that was refused (awl run --input
// ndjson): malformed, of an unknown type, or over the size limit. Line
// counts from 1.
type InputError struct {
	Base
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Emitter writes events as NDJSON, one complete line per write. It is safe
// for concurrent use.
type Emitter struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
	err error
	// holding keeps events in held instead of writing them (Hold); wait,
	// once Release has set it, is waited for before held is written.
	holding bool
	held    [][][]byte
	wait    func() error
	// redact, when set (SetRedact), replaces secrets in every event's
	// JSON but a stored entry's, whose line was redacted before it was
	// stored.
	redact func(string) string
}

// SetRedact makes e replace the secrets in every event it writes from
// now on with redact, applied to the event's JSON text (redact.Redactor's
// JSON): tool names, call ids, errors, every string field, whichever
// event carries it.
func (e *Emitter) SetRedact(redact func(string) string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.redact = redact
	e.mu.Unlock()
}

// NewEmitter returns an Emitter writing to w; a nil w discards events.
func NewEmitter(w io.Writer, now func() time.Time) *Emitter {
	if now == nil {
		now = time.Now
	}
	return &Emitter{w: w, now: now}
}

// Stamp fills a Base for an event of type typ.
func (e *Emitter) Stamp(typ, sessionID string) Base {
	return Base{Type: typ, SessionID: sessionID, Timestamp: e.now().UTC().Format("2006-01-02T15:04:05.000Z")}
}

// Emit writes one event. Write errors are remembered (see Err) and later
// events are dropped, so a closed pipe never breaks the run or the session.
func (e *Emitter) Emit(ev any) {
	if e == nil || e.w == nil {
		return
	}
	parts, err := eventParts(ev)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if ee, stored := ev.(Entry); e.redact != nil && !(stored && ee.Stored) {
		line := Join(parts...)
		if red := e.redact(string(line)); red != string(line) {
			parts = [][]byte{[]byte(red)}
		}
	}
	if e.holding {
		e.held = append(e.held, parts)
		return
	}
	if e.wait != nil {
		wait, held := e.wait, e.held
		e.wait, e.held = nil, nil
		if wait() == nil {
			for _, p := range held {
				e.write(p)
			}
		}
	}
	e.write(parts)
}

// write writes one event's parts, unless an earlier write failed.
func (e *Emitter) write(parts [][]byte) {
	if e.err != nil {
		return
	}
	if pw, ok := e.w.(PartsWriter); ok {
		e.err = pw.WriteParts(parts...)
	} else if _, err := e.w.Write(Join(parts...)); err != nil {
		e.err = err
	}
}

// Hold keeps the events emitted from now on, in order, instead of writing
// them, until Release. It is for a run that sends its first request while
// the entries those events echo are still being made durable.
func (e *Emitter) Hold() {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.holding = true
	e.mu.Unlock()
}

// Release ends Hold: the next event emitted first waits for durable, then
// writes the held events before itself, or drops them when durable
// returns an error (what they echo was never stored).
func (e *Emitter) Release(durable func() error) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.holding = false
	e.wait = durable
	e.mu.Unlock()
}

// marshalEvent is ev as one NDJSON line.
func marshalEvent(ev any) ([]byte, error) {
	parts, err := eventParts(ev)
	return Join(parts...), err
}

// eventParts is ev as one NDJSON line, in pieces. "<", ">" and "&" are
// written as they are, not as \u003c…: an entry event then carries its
// session line's text byte for byte, and `grep '<stdin>'` finds it in both.
func eventParts(ev any) ([][]byte, error) {
	if ee, ok := ev.(Entry); ok && (ee.Stored || json.Valid(ee.Entry)) && isCompact(ee.Entry) {
		return entryEventParts(ee), nil
	}
	if s, ok := ev.(Session); ok {
		return [][]byte{appendSession(nil, &s)}, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return nil, err
	}
	return [][]byte{buf.Bytes()}, nil
}

// entryEventParts is an entry event around its session line, the line
// itself not copied: encoding/json would compact the line again (a second
// full pass) into a buffer doubling as it grew, which held up to three
// times a 50 MB prompt's line. The bytes are the same (TestEntryEventBytes).
func entryEventParts(ee Entry) [][]byte {
	head := appendBase(nil, &ee.Base) // {"type":…,"timestamp":"…"
	head = append(head, `,"entry":`...)
	return [][]byte{head, ee.Entry, []byte("}\n")}
}

// isCompact reports whether a valid JSON text has no white space between
// tokens, as session lines never do, so that it can be copied as is.
func isCompact(b []byte) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	in := false
	for i := 0; i < len(b); i++ {
		if in {
			// Inside a string only '"', '\\' and 0xE2 matter: a 50 MB
			// prompt's line is skipped a word at a time.
			if i = jsonstr.SkipPlain(b, i); i == len(b) {
				break
			}
		}
		c := b[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return false
		case in && (c == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xa8 || b[i+2] == 0xa9)):
			// U+2028 and U+2029: leave them to encoding/json, whatever it
			// does with them.
			return false
		}
	}
	return true
}

// Err returns the first write error.
func (e *Emitter) Err() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

var dataKey = []byte(`"data"`)

// EchoLine returns a session line for an entry event: the line itself, with
// the bytes of every image block and tool-result attachment replaced by
// their metadata (mimeType, size in bytes, sha256 of the decoded bytes).
func EchoLine(line []byte) json.RawMessage {
	if !bytes.Contains(line, dataKey) {
		return json.RawMessage(line)
	}
	out := string(line)
	content := gjson.GetBytes(line, "message.content")
	for i, blk := range content.Array() {
		bi := strconv.Itoa(i)
		if blk.Get("type").String() == "image" && blk.Get("data").Exists() {
			out = stripData(out, "message.content."+bi, blk.Get("data").String())
		}
		for j, att := range blk.Get("attachments").Array() {
			if att.Get("data").Exists() {
				out = stripData(out, "message.content."+bi+".attachments."+strconv.Itoa(j), att.Get("data").String())
			}
		}
	}
	return json.RawMessage(out)
}

func stripData(doc, path, data string) string {
	raw, err := base64.StdEncoding.DecodeString(data)
	size := len(raw)
	if err != nil {
		size = base64.StdEncoding.DecodedLen(len(data))
	}
	sum := sha256.Sum256(raw)
	doc, _ = sjson.Delete(doc, path+".data")
	doc, _ = sjson.Set(doc, path+".size", size)
	doc, _ = sjson.Set(doc, path+".sha256", hex.EncodeToString(sum[:]))
	return doc
}

// Sandbox is what the session event reports about the sandbox (the
// runner fills it from the sandbox's status).
type Sandbox struct {
	Mode    string `json:"mode"`
	Network bool   `json:"network"`
	// ABI is the kernel's Landlock ABI version; 0 when it has none.
	ABI int `json:"abi"`
	// Enforced says what this kernel confines, piece by piece.
	Enforced Enforced `json:"enforced"`
	// Warning says what is not enforced, with --sandbox-best-effort.
	Warning string `json:"warning,omitempty"`
}

// Enforced says, piece by piece, what the kernel stops a confined command
// from doing (the runner copies it from the sandbox's status). A piece
// the policy allows (the network, with --sandbox-network) is false.
type Enforced struct {
	Files     bool `json:"files"`
	TCP       bool `json:"tcp"`
	UDP       bool `json:"udp"`
	Raw       bool `json:"raw"`
	Unix      bool `json:"unix"`
	Processes bool `json:"processes"`
	Proc      bool `json:"proc"`
	Git       bool `json:"git"`
}

// CheckResult is one --check command in the result: its last exit code
// (-1 when it did not exit on its own: killed, timed out, not started) and
// how many times it ran.
type CheckResult struct {
	Cmd      string `json:"cmd"`
	ExitCode int    `json:"exit_code"`
	Attempts int    `json:"attempts"`
}

// CheckStart says a --check command started.
type CheckStart struct {
	Base
	Cmd     string `json:"cmd"`
	Attempt int    `json:"attempt"`
}

// CheckEnd says a --check command ended.
type CheckEnd struct {
	Base
	Cmd        string `json:"cmd"`
	Attempt    int    `json:"attempt"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
}

// MCPServer is how one MCP server's start went, on the session event.
type MCPServer struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// Status is "started" or "failed".
	Status string `json:"status"`
	// Tools are the awl names of the tools the server listed (before
	// --tools and --deny-tools).
	Tools []string `json:"tools"`
	// DurationMS is the time from launch until the tools were listed, or
	// until the start failed.
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

// MCPElicitation reports an MCP server's request for user input and
// how awl answered it, at once, with no one to ask: "accept" with the
// schema's defaults when every required field has one, else "decline".
type MCPElicitation struct {
	Base
	Server string `json:"server"`
	// Name and CallID are the tool call the request came during.
	Name    string   `json:"name"`
	CallID  string   `json:"call_id"`
	Message string   `json:"message"`
	Action  string   `json:"action"`
	Fields  []string `json:"fields"`
	Reason  string   `json:"reason"`
}
