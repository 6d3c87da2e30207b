package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readAllExact returns every byte after the prefix, from a pipe-like reader
// and from a regular file, whatever the size, and holds no more than it read
// and the room asked for.
func TestReadAllExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for i, n := range []int{0, 1, 100, 64 << 10, 64<<10 + 1, 3<<20 + 7, 9 << 20} {
		prefix, room := "", 0
		if i%2 == 1 {
			prefix, room = "the arguments\n\n<stdin>\n", len("\n</stdin>")
		}
		data := make([]byte, n)
		for i := range data {
			data[i] = byte('a' + r.IntN(26))
		}
		// A reader that is not a file: chunks.
		br := bufio.NewReaderSize(iotestHalf{bytes.NewReader(data)}, 64<<10)
		got, err := readAllExact(br, nil, prefix, room)
		if err != nil || string(got) != prefix+string(data) {
			t.Fatalf("pipe, %d bytes: got %d bytes, %v", n, len(got), err)
		}
		if cap(got)-len(got) < room {
			t.Errorf("pipe, %d bytes: capacity %d, no room for %d more", n, cap(got), room)
		}
		if cap(got) > len(got)+room+64<<10 {
			t.Errorf("pipe, %d bytes: capacity %d", n, cap(got))
		}
		// A regular file, part of it already buffered by a Peek.
		path := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		br = bufio.NewReaderSize(f, 64<<10)
		br.Peek(1)
		got, err = readAllExact(br, f, prefix, room)
		f.Close()
		if err != nil || string(got) != prefix+string(data) {
			t.Fatalf("file, %d bytes: got %d bytes, %v", n, len(got), err)
		}
		if cap(got)-len(got) < room {
			t.Errorf("file, %d bytes: capacity %d, no room for %d more", n, cap(got), room)
		}
		if cap(got) > len(got)+room+1 {
			t.Errorf("file, %d bytes: capacity %d, want the file's size", n, cap(got))
		}
	}
}

// iotestHalf returns at most half of what is asked, as a pipe may.
type iotestHalf struct{ r io.Reader }

func (h iotestHalf) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:len(p)/2]
	}
	return h.r.Read(p)
}

// readStdin joins what it read with the arguments as the prompt always did:
// arguments, a blank line, the input in <stdin> tags without its trailing
// newlines; an empty input is empty, whatever the wrapping.
func TestReadStdinWrap(t *testing.T) {
	old := func(text, data string) string {
		if data == "" {
			return text
		}
		return text + "\n\n<stdin>\n" + strings.TrimRight(data, "\n") + "\n</stdin>"
	}
	for _, data := range []string{"", "\n", "\n\n\n", "x", "x\n", "a\nb\n\n", strings.Repeat("y", 100<<10) + "\n"} {
		for _, file := range []bool{false, true} {
			var in io.Reader = iotestHalf{strings.NewReader(data)}
			if file {
				path := filepath.Join(t.TempDir(), "in")
				os.WriteFile(path, []byte(data), 0o600)
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				in = f
			}
			w := wrap{prefix: "summarise\n\n<stdin>\n", suffix: "\n</stdin>", trim: true}
			got, state, err := readStdin(context.Background(), in, 0, w)
			if err != nil {
				t.Fatal(err)
			}
			if got == "" {
				got = "summarise"
			}
			if want := old("summarise", data); got != want {
				t.Errorf("file %v, input %.20q: got %.60q, want %.60q", file, data, got, want)
			}
			if (state == "empty") != (data == "") {
				t.Errorf("input %.20q: state %q", data, state)
			}
		}
	}
}
