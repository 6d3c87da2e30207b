package session

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/internal/jsonstr"
)

// Append gives the session's memo each long string of a message as its
// line spells it, those very bytes of the line, for the strings the
// session keeps (what a request is projected from); a short one, or one of
// a session without a memo, is not kept.
func TestAppendPutsLongStringsInMemo(t *testing.T) {
	memo := &jsonstr.Memo{}
	long := strings.Repeat("a \"line\"\t\u2028\n", jsonstr.MemoMin/10)
	result := strings.Repeat("output\n", jsonstr.MemoMin/6)
	first := Entry{Provider: "p", Model: "m", Message: userMsg(long)}
	s, stored, err := testStore(t).CreateAppending(CreateOptions{Cwd: "/w", Provider: "p", Model: "m", Memo: memo}, []Entry{first})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Memo != memo {
		t.Fatal("the session does not have the memo it was created with")
	}
	e := mustAppend(t, s, Entry{Message: &conv.Message{Role: conv.RoleUser, Content: []conv.Block{
		conv.TextBlock("short"), {Type: conv.BlockToolResult, ToolUseID: "c", Content: result},
	}}})
	check := func(s string, line []byte) {
		t.Helper()
		j := memo.Get(s)
		if !bytes.Equal(j, jsonstr.Append(nil, s)) {
			t.Fatalf("memo has %.40q for a %d-byte string", j, len(s))
		}
		at := uintptr(unsafe.Pointer(unsafe.SliceData(j))) - uintptr(unsafe.Pointer(unsafe.SliceData(line)))
		if at >= uintptr(len(line)) || !bytes.Equal(line[at:int(at)+len(j)], j) {
			t.Errorf("the memo's bytes for a %d-byte string are not the line's", len(s))
		}
	}
	check(s.Entries[0].Message.Content[0].Text, stored[0].Line)
	check(s.Entries[1].Message.Content[1].Content, e.Line)
	if memo.Get("short") != nil || memo.Len() != 2 {
		t.Errorf("memo holds %d strings, want the two long ones", memo.Len())
	}
	// A copy of the string, equal but elsewhere, is not known.
	if memo.Get(strings.Clone(long)) != nil {
		t.Error("an equal string elsewhere in memory is known")
	}
}
