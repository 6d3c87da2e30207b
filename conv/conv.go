// Package conv is awl's neutral conversation model: roles, content blocks and
// usage. It is a leaf package of plain data. The session package stores these
// values in the v1 JSONL format and the provider package lowers them to wire
// requests; neither knows about the other.
package conv

import "math"

// Role is who authored a message.
type Role string

// The roles of session format v1.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType discriminates a content block. The values are the on-disk `type`
// strings of session format v1.
type BlockType string

// Content block types.
const (
	BlockText       BlockType = "text"
	BlockThinking   BlockType = "thinking"
	BlockToolUse    BlockType = "toolUse"
	BlockToolResult BlockType = "toolResult"
	BlockImage      BlockType = "image"
)

// StopReason is why the model stopped, normalised across wire APIs.
type StopReason string

// Stop reasons of session format v1.
const (
	StopEnd     StopReason = "stop"
	StopLength  StopReason = "length"
	StopToolUse StopReason = "toolUse"
	StopError   StopReason = "error"
)

// Block is one content block. Which fields are meaningful depends on Type:
//
//	text:       Text
//	thinking:   Thinking, Signature, Redacted, ItemID
//	toolUse:    ID, Name, Input (raw JSON text)
//	toolResult: ToolUseID, Content, IsError, Attachments
//	image:      MimeType, Data (base64)
type Block struct {
	Type BlockType

	Text string

	// Thinking is the model's visible reasoning text (or summary).
	Thinking string
	// Signature is the opaque token a provider needs to accept the thinking
	// back: Anthropic's signature, OpenAI Responses' encrypted_content.
	Signature string
	// Redacted holds Anthropic's opaque redacted_thinking data; when set the
	// block is a redacted thinking block and Thinking is empty.
	Redacted string
	// ItemID is the provider's own id of the reasoning item (OpenAI
	// Responses `rs_…`), needed to send it back; for Chat Completions it is
	// "reasoning_content" when the thinking arrived in that field, which
	// such servers (DeepSeek) need back in a tool loop.
	ItemID string

	ID    string
	Name  string
	Input string

	ToolUseID   string
	Content     string
	IsError     bool
	Attachments []Attachment
	// Hook is what the pre-tool hooks decided about the call this is the
	// result of (--tool-hook), nil when none ran: kept with the result so
	// that a resume, a fork and a replay see the same history, and a
	// replay applies it without running a hook again.
	Hook *HookRecord
	// Interrupted marks the result of a call that an interrupt message
	// (awl run --input ndjson) ended or kept from running: a replay
	// re-enacts the interrupt there instead of running the call.
	Interrupted bool

	MimeType string
	Data     string
}

// HookRecord is a pre-tool hook's decision about a call.
type HookRecord struct {
	Decision string // "allow" or "deny"
	Hook     string // the command of the hook that denied, or changed the input
	Reason   string // why it denied
	Input    string // the input it changed the call's to (JSON), "" when unchanged
}

// Attachment is a binary attachment on a tool result. Only images exist today.
type Attachment struct {
	Type     string // "image"
	MimeType string
	Data     string // base64, standard encoding with padding
}

// Usage counts tokens for one model response.
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
}

// CacheReadShare is the share of the input read from the prompt cache:
// cache reads over all input tokens (plain input, cache reads and cache
// writes), rounded to a thousandth. ok is false when there was no input.
func (u Usage) CacheReadShare() (share float64, ok bool) {
	all := u.Input + u.CacheRead + u.CacheWrite
	if all <= 0 || u.CacheRead < 0 {
		return 0, false
	}
	return math.Round(1000*float64(u.CacheRead)/float64(all)) / 1000, true
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Input:      u.Input + o.Input,
		Output:     u.Output + o.Output,
		CacheRead:  u.CacheRead + o.CacheRead,
		CacheWrite: u.CacheWrite + o.CacheWrite,
	}
}

// Message is one conversation message. Provider, Model, StopReason, Usage
// and CostUSD are response metadata and are set on assistant messages only.
type Message struct {
	Role    Role
	Content []Block

	Provider   string
	Model      string
	StopReason StopReason
	// ServiceTier is the processing tier the API says served the request
	// ("default", "flex", "priority"; Anthropic's "standard",
	// "priority"); "" when it said none.
	ServiceTier string
	Usage       *Usage
	// CostUSD is what the request that produced the message cost, in US
	// dollars; nil when it is not known (no price for the model, no usage).
	CostUSD *float64
}

// Text returns the concatenation of the message's text blocks.
func (m Message) Text() string {
	var n int
	for _, b := range m.Content {
		if b.Type == BlockText {
			n += len(b.Text)
		}
	}
	out := make([]byte, 0, n)
	for _, b := range m.Content {
		if b.Type == BlockText {
			out = append(out, b.Text...)
		}
	}
	return string(out)
}

// ToolUses returns the message's toolUse blocks in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// Redacted is the text that stands for the value of the secret variable
// name wherever awl removed one (a tool result, an event, an error a
// server echoed a key in): [redacted:NAME], one spelling for every layer.
func Redacted(name string) string { return "[redacted:" + name + "]" }
