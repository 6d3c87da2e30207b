package tool

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Minimal file starts for each format: enough for detection.
var imageHeads = map[string]string{
	MimePNG:  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00",
	MimeJPEG: "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
	MimeGIF:  "GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!",
	MimeWebP: "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10",
}

func TestLoadImage(t *testing.T) {
	dir := t.TempDir()
	// The extension never decides the type: each file is named .bin.
	for mime, head := range imageHeads {
		p := filepath.Join(dir, strings.ReplaceAll(mime, "/", "_")+".bin")
		if err := os.WriteFile(p, []byte(head), 0o644); err != nil {
			t.Fatal(err)
		}
		att, err := LoadImage(p)
		if err != nil {
			t.Fatalf("%s: %v", mime, err)
		}
		data, err := base64.StdEncoding.DecodeString(att.Data)
		if att.Type != "image" || att.MimeType != mime || err != nil || string(data) != head {
			t.Errorf("%s: got %+v", mime, att)
		}
	}
	gif87 := filepath.Join(dir, "old.gif")
	if err := os.WriteFile(gif87, []byte("GIF87a\x01\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if att, err := LoadImage(gif87); err != nil || att.MimeType != MimeGIF {
		t.Errorf("GIF87a: %+v, %v", att, err)
	}
}

func TestLoadImageErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A 20 MB PNG: the size is refused before the bytes are read.
	big := filepath.Join(dir, "big.png")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(imageHeads[MimePNG]); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(20 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	justOver := write("over.png", append([]byte(imageHeads[MimePNG]), make([]byte, MaxImageBytes+1-len(imageHeads[MimePNG]))...))
	atLimit := write("at.png", append([]byte(imageHeads[MimePNG]), make([]byte, MaxImageBytes-len(imageHeads[MimePNG]))...))

	cases := []struct {
		path string
		want string
	}{
		{big, big + ": 20.0 MB is over the 3.75 MB image limit"},
		{justOver, justOver + ": 3.75 MB is over the 3.75 MB image limit"},
		{write("x.txt", []byte("just text\n")), "x.txt: not a PNG, JPEG, GIF or WebP image"},
		{write("fake.png", []byte("PNG but not really")), "fake.png: not a PNG, JPEG, GIF or WebP image"},
		{write("riff.webp", []byte("RIFF\x00\x00\x00\x00WAVE")), "riff.webp: not a PNG, JPEG, GIF or WebP image"},
		{write("empty.png", nil), "empty.png: not a PNG, JPEG, GIF or WebP image"},
		{dir, dir + ": is a directory, not an image"},
		{filepath.Join(dir, "nope.png"), filepath.Join(dir, "nope.png") + ": no such file or directory"},
	}
	for _, c := range cases {
		_, err := LoadImage(c.path)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) || !strings.HasPrefix(err.Error(), dir) {
			t.Errorf("LoadImage(%s) error = %v, want %q", c.path, err, c.want)
		}
	}
	if _, err := LoadImage(filepath.Join(dir, "nope.png")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error %v does not match fs.ErrNotExist", err)
	}
	if att, err := LoadImage(atLimit); err != nil || base64.StdEncoding.DecodedLen(len(att.Data)) < MaxImageBytes {
		t.Errorf("a file of exactly MaxImageBytes: %v", err)
	} else if len(att.Data) > MaxImageBase64Bytes {
		t.Errorf("base64 of a MaxImageBytes file is %d bytes, over the %d provider limit", len(att.Data), MaxImageBase64Bytes)
	}
}

func TestViewImage(t *testing.T) {
	dir := tree(t, map[string]string{
		"shot.png":  imageHeads[MimePNG],
		"photo.jpg": imageHeads[MimeJPEG],
		"anim.gif":  imageHeads[MimeGIF],
		"pic.webp":  imageHeads[MimeWebP],
		"notes.txt": "hello",
	})
	for name, mime := range map[string]string{"shot.png": MimePNG, "photo.jpg": MimeJPEG, "anim.gif": MimeGIF, "pic.webp": MimeWebP} {
		res := call(t, Env{Dir: dir}, "view_image", args(t, map[string]any{"path": name}))
		head := imageHeads[mime]
		wantText := "image " + name + " (" + mime + ", " + strconv.Itoa(len(head)) + " bytes)"
		if res.IsError || res.Content != wantText || len(res.Attachments) != 1 {
			t.Errorf("view_image %s = %+v, want %q and one attachment", name, res, wantText)
			continue
		}
		data, _ := base64.StdEncoding.DecodeString(res.Attachments[0].Data)
		if res.Attachments[0].MimeType != mime || !bytes.Equal(data, []byte(head)) {
			t.Errorf("view_image %s attachment = %+v", name, res.Attachments[0])
		}
	}
	for input, wantText := range map[string]string{
		`{"path":"notes.txt"}`: "view_image: notes.txt: not a PNG, JPEG, GIF or WebP image",
		`{"path":"gone.png"}`:  "view_image: gone.png: no such file or directory",
		`{"path":""}`:          "view_image: path is empty",
	} {
		res := call(t, Env{Dir: dir}, "view_image", input)
		if !res.IsError || res.Content != wantText || res.Attachments != nil {
			t.Errorf("view_image %s = %+v, want error %q", input, res, wantText)
		}
	}
}

func TestMegabytes(t *testing.T) {
	for n, want := range map[int64]string{20 << 20: "20.0 MB", MaxImageBytes: "3.75 MB", 5 << 20: "5.0 MB", 1 << 19: "0.5 MB"} {
		if got := megabytes(n); got != want {
			t.Errorf("megabytes(%d) = %q, want %q", n, got, want)
		}
	}
}
