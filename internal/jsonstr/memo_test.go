package jsonstr

import (
	"strings"
	"testing"
)

// A Memo knows a string by its bytes in memory: not an equal copy, not a
// short string; it forgets at the second Sweep what nobody took since the
// first, and a nil Memo knows nothing.
func TestMemo(t *testing.T) {
	var nilMemo *Memo
	nilMemo.Put("x", nil)
	nilMemo.Sweep()
	if nilMemo.Get("x") != nil || nilMemo.Len() != 0 {
		t.Fatal("a nil memo knows something")
	}
	m := &Memo{}
	long := strings.Repeat("ab\n", MemoMin)
	other := strings.Repeat("cd\n", MemoMin)
	m.Put(long, Append(nil, long))
	m.Put(other, Append(nil, other))
	m.Put("short", Append(nil, "short"))
	if m.Len() != 2 || m.Get("short") != nil {
		t.Fatalf("memo holds %d strings, want the 2 long ones", m.Len())
	}
	if m.Get(strings.Clone(long)) != nil {
		t.Fatal("an equal copy is known")
	}
	if m.Get(long[:len(long)-1]) != nil {
		t.Fatal("a prefix of a known string is known")
	}
	m.Sweep() // both were put since: kept
	if m.Get(long) == nil {
		t.Fatal("a string put before the first sweep was forgotten")
	}
	m.Sweep() // long was taken since, other not
	if m.Get(long) == nil || m.Get(other) != nil {
		t.Fatalf("after the second sweep: long known %v, other known %v", m.Get(long) != nil, m.Get(other) != nil)
	}
}
