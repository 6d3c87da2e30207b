package main

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// readAllExact returns every byte, from a pipe-like reader and from a
// regular file, whatever the size, and holds no more than it read.
func TestReadAllExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 100, 64 << 10, 64<<10 + 1, 3<<20 + 7, 9 << 20} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte('a' + r.IntN(26))
		}
		// A reader that is not a file: chunks.
		br := bufio.NewReaderSize(iotestHalf{bytes.NewReader(data)}, 64<<10)
		got, err := readAllExact(br, nil)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("pipe, %d bytes: got %d bytes, %v", n, len(got), err)
		}
		if cap(got) > len(got)+64<<10 {
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
		got, err = readAllExact(br, f)
		f.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("file, %d bytes: got %d bytes, %v", n, len(got), err)
		}
		if cap(got) > len(got)+1 {
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
