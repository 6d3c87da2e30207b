package jsonstr

import (
	"sync"
	"unsafe"
)

// MemoMin is the shortest string a Memo keeps: below it, escaping again
// costs less than looking it up.
const MemoMin = 64 << 10

// Memo keeps the JSON form of long strings one encoder wrote (a session
// line), for another to take instead of escaping them again (a request
// body). A string is known by where its bytes are, not by what they
// are: the Memo holds the string, so its bytes cannot be reused for
// another while it is known, and a string's bytes never change. An equal
// string elsewhere in memory is not known. The zero value is empty; nil
// keeps nothing. It is safe for concurrent use.
type Memo struct {
	mu sync.Mutex
	m  map[memoKey]*memoVal
}

type memoKey struct {
	p *byte
	n int
}

type memoVal struct {
	s    string // held so that its bytes stay its own
	json []byte
	// kept: taken, or put, since the last Sweep.
	kept bool
}

func keyOf(s string) memoKey { return memoKey{unsafe.StringData(s), len(s)} }

// Put records json, which must be Append(nil, s) byte for byte (the
// caller's own buffer, not copied: it must not change), as the JSON form
// of s. A string shorter than MemoMin is not kept.
func (m *Memo) Put(s string, json []byte) {
	if m == nil || len(s) < MemoMin {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[memoKey]*memoVal{}
	}
	m.m[keyOf(s)] = &memoVal{s: s, json: json, kept: true}
}

// Get returns the JSON form recorded for s (these very bytes of s), or
// nil. It marks s as in use for Sweep.
func (m *Memo) Get(s string) []byte {
	if m == nil || len(s) < MemoMin {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.m[keyOf(s)]
	if v == nil {
		return nil
	}
	v.kept = true
	return v.json
}

// Sweep forgets every string neither put nor taken since the last Sweep:
// what the last request did not send and nothing appended since, so that
// a long run does not hold the lines of entries no request shows any
// more (compacted away, or forgotten).
func (m *Memo) Sweep() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.m {
		if !v.kept {
			delete(m.m, k)
			continue
		}
		v.kept = false
	}
}

// Len is how many strings m knows.
func (m *Memo) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
