package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonstr"
)

// This file writes lines. Field order is the seed's: type, id, parentId,
// timestamp, then provider/model on user messages, then message{role,
// content, provider, model, stopReason, usage}. Optional additive fields are
// omitted when empty; fields the seed requires are written even when empty.

// appendKey appends `,"key":` (or `"key":` when first).
func appendKey(dst []byte, key string, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendStringField(dst []byte, key, val string) []byte {
	return jsonstr.Append(appendKey(dst, key, false), val)
}

func appendIntField(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(dst, key, false), v, 10)
}

// appendFloatField appends a number without an exponent (awl's costs), as
// 0 for a value JSON cannot hold.
func appendFloatField(dst []byte, key string, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return strconv.AppendFloat(appendKey(dst, key, false), v, 'f', -1, 64)
}

// appendTime appends t as "2006-01-02T15:04:05.000Z".
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return append(dst, t.Format(`"2006-01-02T15:04:05.000Z"`)...)
	}
	h, mi, s := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst, '"',
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-',
		byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':',
		byte('0'+mi/10), byte('0'+mi%10), ':',
		byte('0'+s/10), byte('0'+s%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
}

// appendHeader appends the header line (without newline).
func appendHeader(dst []byte, h *Header) []byte {
	dst = append(dst, `{"type":"session","version":`...)
	dst = strconv.AppendInt(dst, int64(h.Version), 10)
	dst = appendStringField(dst, "id", h.ID)
	dst = appendTime(appendKey(dst, "timestamp", false), h.Timestamp)
	dst = appendStringField(dst, "cwd", h.Cwd)
	dst = appendStringField(dst, "provider", h.Provider)
	dst = appendStringField(dst, "model", h.Model)
	if h.ForkedFrom != "" {
		dst = appendStringField(dst, "forkedFrom", h.ForkedFrom)
		dst = appendStringField(dst, "forkedAt", h.ForkedAt)
	}
	return append(dst, '}')
}

var errNoMessage = errors.New("message entry without a message")

// appendEntry appends e as one line (without newline). e.Type, ID, ParentID
// and Timestamp must be set. The long strings of a message's blocks are
// put in memo (nil keeps none) with their bytes in dst.
func appendEntry(dst []byte, e *Entry, memo *jsonstr.Memo) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst = jsonstr.Append(dst, e.Type)
	dst = appendStringField(dst, "id", e.ID)
	dst = appendKey(dst, "parentId", false)
	if e.ParentID == "" {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstr.Append(dst, e.ParentID)
	}
	dst = appendTime(appendKey(dst, "timestamp", false), e.Timestamp)
	if e.Type != TypeMessage {
		if e.Provider != "" || e.Model != "" {
			return nil, fmt.Errorf("%s entry: provider and model belong in Fields", e.Type)
		}
		members, err := fieldMembers(e.Fields)
		if err != nil {
			return nil, fmt.Errorf("%s entry: %w", e.Type, err)
		}
		if len(members) > 0 {
			dst = append(dst, ',')
			dst = append(dst, members...)
		}
		return append(dst, '}'), nil
	}
	m := e.Message
	if m == nil {
		return nil, errNoMessage
	}
	switch m.Role {
	case conv.RoleSystem, conv.RoleUser, conv.RoleAssistant:
	default:
		return nil, fmt.Errorf("message role %q: want system, user or assistant", m.Role)
	}
	if m.Role == conv.RoleUser || e.Provider != "" || e.Model != "" {
		dst = appendStringField(dst, "provider", e.Provider)
		dst = appendStringField(dst, "model", e.Model)
	}
	dst = append(dst, `,"message":{"role":`...)
	dst = jsonstr.Append(dst, string(m.Role))
	dst = append(dst, `,"content":[`...)
	for i := range m.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendBlock(dst, &m.Content[i], memo); err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
	}
	dst = append(dst, ']')
	meta := m.Role == conv.RoleAssistant
	if meta || m.Provider != "" {
		dst = appendStringField(dst, "provider", m.Provider)
	}
	if meta || m.Model != "" {
		dst = appendStringField(dst, "model", m.Model)
	}
	if meta || m.StopReason != "" {
		dst = appendStringField(dst, "stopReason", string(m.StopReason))
	}
	if m.ServiceTier != "" {
		dst = appendStringField(dst, "serviceTier", m.ServiceTier)
	}
	if u := m.Usage; u != nil {
		dst = append(dst, `,"usage":{"input":`...)
		dst = strconv.AppendInt(dst, u.Input, 10)
		dst = appendIntField(dst, "output", u.Output)
		if u.CacheRead != 0 {
			dst = appendIntField(dst, "cacheRead", u.CacheRead)
		}
		if u.CacheWrite != 0 {
			dst = appendIntField(dst, "cacheWrite", u.CacheWrite)
		}
		dst = append(dst, '}')
	}
	if c := m.CostUSD; c != nil {
		dst = appendFloatField(dst, "costUsd", *c)
	}
	return append(dst, '}', '}'), nil
}

// appendMemoField is appendStringField that puts a long val's JSON form,
// as written in dst, in memo.
func appendMemoField(dst []byte, memo *jsonstr.Memo, key, val string) []byte {
	dst = appendKey(dst, key, false)
	start := len(dst)
	dst = jsonstr.Append(dst, val)
	if len(val) >= jsonstr.MemoMin {
		memo.Put(val, dst[start:len(dst):len(dst)])
	}
	return dst
}

func appendBlock(dst []byte, b *conv.Block, memo *jsonstr.Memo) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst = jsonstr.Append(dst, string(b.Type))
	switch b.Type {
	case conv.BlockText:
		dst = appendMemoField(dst, memo, "text", b.Text)
	case conv.BlockThinking:
		dst = appendMemoField(dst, memo, "thinking", b.Thinking)
		if b.Signature != "" {
			dst = appendStringField(dst, "signature", b.Signature)
		}
		if b.Redacted != "" {
			dst = appendStringField(dst, "redacted", b.Redacted)
		}
		if b.ItemID != "" {
			dst = appendStringField(dst, "itemId", b.ItemID)
		}
	case conv.BlockToolUse:
		dst = appendStringField(dst, "id", b.ID)
		dst = appendStringField(dst, "name", b.Name)
		dst = appendMemoField(dst, memo, "input", b.Input)
	case conv.BlockToolResult:
		dst = appendStringField(dst, "toolUseId", b.ToolUseID)
		dst = appendMemoField(dst, memo, "content", b.Content)
		if b.IsError {
			dst = append(dst, `,"isError":true`...)
		}
		if b.Interrupted {
			dst = append(dst, `,"interrupted":true`...)
		}
		if h := b.Hook; h != nil {
			dst = append(dst, `,"hook":{"decision":`...)
			dst = jsonstr.Append(dst, h.Decision)
			dst = appendStringField(dst, "command", h.Hook)
			if h.Reason != "" {
				dst = appendStringField(dst, "reason", h.Reason)
			}
			if h.Input != "" {
				dst = appendStringField(dst, "input", h.Input)
			}
			dst = append(dst, '}')
		}
		if len(b.Attachments) > 0 {
			dst = append(dst, `,"attachments":[`...)
			for i, a := range b.Attachments {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"type":`...)
				dst = jsonstr.Append(dst, a.Type)
				dst = appendStringField(dst, "mimeType", a.MimeType)
				dst = appendMemoField(dst, memo, "data", a.Data)
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
	case conv.BlockImage:
		dst = appendStringField(dst, "mimeType", b.MimeType)
		dst = appendMemoField(dst, memo, "data", b.Data)
	default:
		return nil, fmt.Errorf("unknown block type %q", b.Type)
	}
	return append(dst, '}'), nil
}

// fieldMembers returns the members of the JSON object fields, compacted and
// without braces, for writing after an entry's base fields. It refuses
// anything but an object, and the base field names.
func fieldMembers(fields []byte) ([]byte, error) {
	if len(fields) == 0 {
		return nil, nil
	}
	d := decoder{data: fields, copyStrings: true}
	var bad string
	err := d.members(func(key string, _ int) error {
		if isBaseField(key) && bad == "" {
			bad = key
		}
		return d.skip(0)
	})
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, fmt.Errorf("fields: %w", err)
	}
	if bad != "" {
		return nil, fmt.Errorf("fields: %q is a base field", bad)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, fields); err != nil {
		return nil, fmt.Errorf("fields: %w", err)
	}
	b := c.Bytes()
	for len(b) > 0 && b[0] != '{' {
		b = b[1:]
	}
	return b[1 : len(b)-1], nil
}

func isBaseField(key string) bool {
	return key == "type" || key == "id" || key == "parentId" || key == "timestamp"
}

// sizeHint is room for e's line: each long string's exact escaped length
// (jsonstr.Len, one pass over it), twice a short one's, and a few hundred
// bytes for the fields around them. Encoding into a buffer of that size
// copies a large entry once, where growing by appending copied it several
// times over and held up to three times its size at once.
func sizeHint(e *Entry) int {
	str := func(s string) int {
		if len(s) < 256 {
			return 2*len(s) + 16
		}
		return jsonstr.Len(s) + 16
	}
	n := 256 + len(e.Fields)
	if m := e.Message; m != nil {
		for i := range m.Content {
			b := &m.Content[i]
			n += 64 + str(b.Text) + str(b.Thinking) + str(b.Signature) + str(b.Redacted) +
				str(b.Input) + str(b.Content) + str(b.Data)
			for _, a := range b.Attachments {
				n += 64 + str(a.Data)
			}
		}
	}
	return n
}
