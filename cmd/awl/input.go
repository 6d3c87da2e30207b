package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/runner"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/tool"
)

// inputSchema is the JSON Schema of the input messages (awl schema
// input); TestInputSchemaAgrees holds it to what handle takes.
//
//go:embed input.schema.json
var inputSchema []byte

// inputLineMax is the longest input line awl run --input ndjson takes; a
// longer one is refused and skipped, read in pieces and never held whole.
const inputLineMax = 16 << 20

// inputQueue is how many user messages wait while a turn runs before the
// reader stops reading stdin until one is taken.
const inputQueue = 16

// ndjsonInput reads stdin as NDJSON input messages (docs/events.md, "The
// input channel") on its own goroutine, queues the user messages for the
// runner (runner.Input) and answers control messages as it reads them.
type ndjsonInput struct {
	em     *event.Emitter
	strict bool
	dir    string // image paths are relative to it
	q      chan inputItem

	mu      sync.Mutex
	started bool
	stopped bool // Stop: nothing more is emitted
	// interrupt ends the turn in progress; nil between turns (Turn).
	interrupt func()
	sid       string
	pending   []any // events held until Start: the session event comes first
}

// inputItem is a queued prompt, or the error that ends the run
// (--input-strict).
type inputItem struct {
	blocks []conv.Block
	err    error
}

// inputMessage is one input line.
type inputMessage struct {
	Type   string       `json:"type"`
	ID     *string      `json:"id"`
	Text   *string      `json:"text"`
	Images []inputImage `json:"images"`
}

// inputImage is an image of a user message: a file (relative to the run's
// directory) or standard base64 data, with an optional MIME type that must
// be the one the bytes show.
type inputImage struct {
	Path     *string `json:"path"`
	Data     *string `json:"data"`
	MimeType *string `json:"mimeType"`
}

// inputImagesMax is the most images one user message may carry.
const inputImagesMax = 20

// startInput starts reading r.
// Image paths are relative to dir.
func startInput(r io.Reader, em *event.Emitter, strict bool, dir string) *ndjsonInput {
	in := &ndjsonInput{em: em, strict: strict, dir: dir, q: make(chan inputItem, inputQueue)}
	go in.read(r)
	return in
}

// Start implements runner.Input.
func (in *ndjsonInput) Start(sessionID string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.started, in.sid = true, sessionID
	for _, ev := range in.pending {
		in.emitLocked(ev)
	}
	in.pending = nil
}

// Turn implements runner.Input.
func (in *ndjsonInput) Turn(interrupt func()) {
	in.mu.Lock()
	in.interrupt = interrupt
	in.mu.Unlock()
}

// interruptTurn ends the turn in progress; false when none is.
func (in *ndjsonInput) interruptTurn() bool {
	in.mu.Lock()
	f := in.interrupt
	in.interrupt = nil
	in.mu.Unlock()
	if f != nil {
		f()
	}
	return f != nil
}

// Stop implements runner.Input.
func (in *ndjsonInput) Stop() {
	in.mu.Lock()
	in.stopped, in.pending = true, nil
	in.mu.Unlock()
}

// Next implements runner.Input.
func (in *ndjsonInput) Next(ctx context.Context) ([]conv.Block, bool, error) {
	select {
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case it, ok := <-in.q:
		if !ok {
			return nil, false, nil
		}
		if it.err != nil {
			return nil, false, it.err
		}
		return it.blocks, true, nil
	}
}

func (in *ndjsonInput) emit(ev any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case in.stopped:
		return
	case !in.started:
		in.pending = append(in.pending, ev)
		return
	}
	in.emitLocked(ev)
}

// emitLocked stamps ev with the session id and emits it.
func (in *ndjsonInput) emitLocked(ev any) {
	switch e := ev.(type) {
	case event.Control:
		e.Base = in.em.Stamp("control", in.sid)
		in.em.Emit(e)
	case event.InputError:
		e.Base = in.em.Stamp("error", in.sid)
		in.em.Emit(e)
	}
}

// read reads r to its end (or to an end message, or to the first bad
// line with --input-strict), then closes the queue.
func (in *ndjsonInput) read(r io.Reader) {
	defer close(in.q)
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, long, err := readInputLine(br)
		switch {
		case long:
			if !in.refuse(n, nil, fmt.Sprintf("the line is over the %d-byte limit", inputLineMax)) {
				return
			}
		case len(bytes.TrimSpace(line)) > 0:
			if !in.handle(n, line) {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				in.refuse(n, nil, fmt.Sprintf("reading stdin: %v", err))
			}
			return
		}
	}
}

// readInputLine reads one line without its newline; a line over
// inputLineMax is read to its end and dropped (long).
func readInputLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > inputLineMax+1 {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), long, err
	}
}

// handle takes one non-empty line; it returns false when reading ends.
func (in *ndjsonInput) handle(n int, line []byte) bool {
	var m inputMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return in.refuse(n, idOf(line), "not an input message: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return in.refuse(n, m.ID, "more than one JSON value on the line")
	}
	if m.Type != "user" && (m.Text != nil || m.Images != nil) {
		return in.refuse(n, m.ID, fmt.Sprintf("a message of type %q takes no text or images", m.Type))
	}
	switch m.Type {
	case "user":
		blocks, reason := in.userBlocks(m)
		if reason != "" {
			return in.refuse(n, m.ID, reason)
		}
		in.accept(m.ID)
		in.q <- inputItem{blocks: blocks}
		return true
	case "end":
		in.accept(m.ID)
		return false
	case "interrupt":
		switch {
		case in.interruptTurn():
			in.accept(m.ID)
		case m.ID != nil:
			// Well formed, only late (or early): no error, even with
			// --input-strict.
			in.emit(event.Control{ID: *m.ID, Status: "refused", Reason: "no turn in progress"})
		}
		return true
	case "":
		return in.refuse(n, m.ID, "the message has no type")
	default:
		return in.refuse(n, m.ID, fmt.Sprintf("unknown message type %q (user, interrupt, end)", m.Type))
	}
}

// userBlocks is a user message's prompt: its text, then its images, each
// read and checked as --image checks a file; or why it is refused.
func (in *ndjsonInput) userBlocks(m inputMessage) ([]conv.Block, string) {
	hasText := m.Text != nil && strings.Trim(*m.Text, " \t\r\n\x00") != ""
	switch {
	case m.Text != nil && !hasText:
		return nil, "a user message's text may not be blank"
	case !hasText && len(m.Images) == 0:
		return nil, "a user message needs a non-empty text or an image"
	case len(m.Images) > inputImagesMax:
		return nil, fmt.Sprintf("%d images: a user message takes at most %d", len(m.Images), inputImagesMax)
	}
	var blocks []conv.Block
	if hasText {
		blocks = append(blocks, conv.TextBlock(*m.Text))
	}
	// A message's images, read, are bounded as its line is: what waits
	// in the queue stays bounded whether images come as data or paths.
	size := 0
	for i, im := range m.Images {
		att, err := in.image(i, im)
		if err != nil {
			return nil, err.Error()
		}
		if size += len(att.Data); size > inputLineMax {
			return nil, fmt.Sprintf("images[%d]: the message's images are over %d MiB of base64 together", i, inputLineMax>>20)
		}
		blocks = append(blocks, conv.Block{Type: conv.BlockImage, MimeType: att.MimeType, Data: att.Data})
	}
	return blocks, ""
}

// image reads image i of a user message.
func (in *ndjsonInput) image(i int, im inputImage) (conv.Attachment, error) {
	name := fmt.Sprintf("images[%d]", i)
	var att conv.Attachment
	var err error
	switch {
	case (im.Path == nil) == (im.Data == nil):
		return att, fmt.Errorf("%s: give either path or data", name)
	case im.Path != nil && *im.Path == "":
		return att, fmt.Errorf("%s: the path is empty", name)
	case im.Path != nil:
		p := *im.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(in.dir, p)
		}
		att, err = tool.LoadImage(p)
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
	default:
		att, err = tool.ImageData(name+".data", *im.Data)
	}
	if err == nil && im.MimeType != nil && *im.MimeType != att.MimeType {
		err = fmt.Errorf("%s: mimeType says %s, the bytes are %s", name, *im.MimeType, att.MimeType)
	}
	return att, err
}

// idOf is the id a line that is no input message may still carry.
func idOf(line []byte) *string {
	var v struct {
		ID *string `json:"id"`
	}
	if json.Unmarshal(line, &v) != nil {
		return nil
	}
	return v.ID
}

func (in *ndjsonInput) accept(id *string) {
	if id != nil {
		in.emit(event.Control{ID: *id, Status: "accepted"})
	}
}

// refuse reports line n refused (an error event, and a control event when
// it carried an id); it returns false when that ends reading
// (--input-strict: the run ends with exit 2 after the turn in progress).
func (in *ndjsonInput) refuse(n int, id *string, reason string) bool {
	in.emit(event.InputError{Line: n, Message: reason})
	if id != nil {
		in.emit(event.Control{ID: *id, Status: "refused", Reason: reason})
	}
	if !in.strict {
		return true
	}
	in.q <- inputItem{err: runner.Usagef(fmt.Sprintf("stdin:%d: %s (--input-strict)", n, reason))}
	return false
}

// checkInputFlags refuses what --input ndjson cannot go with.
func (c *runCmd) checkInputFlags(replay bool) error {
	if c.Input != "ndjson" {
		if c.InputStrict {
			return runner.Usagef("--input-strict applies to --input ndjson")
		}
		return nil
	}
	switch {
	case len(c.Args) > 0 || c.Prompt != "" || c.PromptFile != "":
		return runner.Usagef("--input ndjson takes its prompts from stdin: give none as arguments, with -p or with -f")
	case c.NoStdin:
		return runner.Usagef("--input ndjson reads stdin, which --no-stdin forbids")
	case len(c.Image) > 0:
		return runner.Usagef("--input ndjson takes its prompts from stdin: --image has no prompt to go with")
	case replay || c.Replay != "":
		return runner.Usagef("--input ndjson has no place in a replay: the recording holds the prompts")
	}
	return nil
}

// readFirstInput starts reading stdin as input messages and waits for the
// first user message, the run's prompt; the rest are the runner's
// (runInput).
func (c *runCmd) readFirstInput(ctx context.Context, a *app, st *runSetup, em *event.Emitter) error {
	if err := c.readSchema(ctx, a, st); err != nil {
		return err
	}
	st.stdinState = "ndjson"
	c.input = startInput(orEmpty(a.stdin), em, c.InputStrict, st.cwd)
	blocks, ok, err := c.input.Next(ctx)
	if err == nil && !ok {
		err = runner.Usagef("no prompt: stdin ended before a user message (--input ndjson)")
	}
	if err != nil {
		// No session: what the input reported goes out now, naming none,
		// and nothing after the result.
		c.input.Start("")
		c.input.Stop()
		return err
	}
	for _, b := range blocks {
		switch b.Type {
		case conv.BlockText:
			st.text = b.Text
		case conv.BlockImage:
			st.images = append(st.images, conv.Attachment{Type: "image", MimeType: b.MimeType, Data: b.Data})
		}
	}
	return nil
}

// orEmpty is stdin, or an empty reader when there is none.
func orEmpty(r io.Reader) io.Reader {
	if r == nil {
		return strings.NewReader("")
	}
	return r
}

// runInput is the runner's input: nil unless --input ndjson.
func (c *runCmd) runInput() runner.Input {
	if c.input == nil {
		return nil
	}
	return c.input
}
