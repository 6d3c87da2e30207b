package tool

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Small real images of each format (WebP: a 1×1 lossless file).
var imageHeads = map[string]string{
	MimePNG:  encodeImage(func(w io.Writer, m image.Image) error { return png.Encode(w, m) }),
	MimeJPEG: encodeImage(func(w io.Writer, m image.Image) error { return jpeg.Encode(w, m, nil) }),
	MimeGIF:  encodeImage(func(w io.Writer, m image.Image) error { return gif.Encode(w, m, nil) }),
	MimeWebP: webpLossless,
}

const (
	webpLossless = "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"
	webpLossy    = "RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00\x30\x01\x00\x9d\x01\x2a\x01\x00\x01\x00\x03\x00\x34\x25\xa4\x00\x03\x70\x00\xfe\xfb\x94\x00\x00"
)

// encodeImage returns a 3×2 image as enc writes it.
func encodeImage(enc func(io.Writer, image.Image) error) string {
	m := image.NewRGBA(image.Rect(0, 0, 3, 2))
	m.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := enc(&b, m); err != nil {
		panic(err)
	}
	return b.String()
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
	for name, data := range map[string]string{
		"old.gif": "GIF87a\x01\x00\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;",
		// Lossy; and extended, with the canvas size (1×1 here).
		"lossy.webp": webpLossy,
		"ext.webp":   "RIFF\x16\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		// An odd-sized chunk whose pad byte the RIFF size leaves out.
		"nopad.webp": "RIFF\x19\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadImage(p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// pngIHDR is the PNG file data with the bytes at off in its IHDR data
// replaced by b, and the chunk's CRC made to match.
func pngIHDR(data string, off int, b ...byte) string {
	d := []byte(data)
	copy(d[16+off:], b)
	binary.BigEndian.PutUint32(d[29:], crc32.ChecksumIEEE(d[12:29]))
	return string(d)
}

// A file that only starts like an image is refused: stored in the session
// log it would make the provider refuse every later request.
func TestLoadImageMalformed(t *testing.T) {
	dir := t.TempDir()
	pngData := imageHeads[MimePNG]
	zeroWidth := []byte(pngData)
	zeroWidth[16], zeroWidth[17], zeroWidth[18], zeroWidth[19] = 0, 0, 0, 0 // IHDR width; the CRC no longer matches
	for name, c := range map[string]struct{ data, want string }{
		"magic.png":      {"\x89PNG\r\n\x1a\n", "not a valid PNG image: the file ends inside its header"},
		"cut.png":        {pngData[:20], "not a valid PNG image: the file ends inside its header"},
		"crc.png":        {string(zeroWidth), "not a valid PNG image: its IHDR chunk fails its checksum"},
		"zero.png":       {pngIHDR(pngData, 0, 0, 0, 0, 0), "not a valid PNG image: it is 0×2 pixels"},
		"gray3.png":      {pngIHDR(pngData, 8, 3, 0), "not a valid PNG image: its colour type 0 with bit depth 3 is not a PNG's"},
		"sof3.jpg":       {"\xff\xd8\xff\xc3\x00\x0b\x08\x00\x01\x00\x01\x01\x01\x11\x00", "not a valid JPEG image: its frame type (SOF3) is not baseline"},
		"sos.jpg":        {"\xff\xd8\xff\xda\x00\x02", "not a valid JPEG image: marker 0xda comes before the frame header"},
		"cutseg.jpg":     {"\xff\xd8\xff\xe0\x00\x10JFIF", "not a valid JPEG image: the file ends inside its header"},
		"table.gif":      {"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00", "not a valid GIF image: the file ends inside its header"},
		"magic.jpg":      {"\xff\xd8\xff", "not a valid JPEG image: "},
		"magic.gif":      {"GIF89a", "not a valid GIF image: the file ends inside its header"},
		"zero.gif":       {"GIF89a\x00\x00\x00\x00\x00\x00\x00", "not a valid GIF image: it is 0×0 pixels"},
		"magic.webp":     {"RIFF\x00\x00\x00\x00WEBP", "not a valid WebP image: the file ends inside its header"},
		"size.webp":      {"RIFF\x00\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00", "not a valid WebP image: its RIFF size says 0 bytes, the file has 26 after the RIFF header"},
		"chunk.webp":     {"RIFF\x0c\x00\x00\x00WEBPVP8L\x40\x00\x00\x00", "not a valid WebP image: its \"VP8L\" chunk says 64 bytes, the file has 0"},
		"fourcc.webp":    {"RIFF\x0e\x00\x00\x00WEBPICCP\x02\x00\x00\x00ab", `not a valid WebP image: its first chunk is "ICCP", not VP8, VP8L or VP8X`},
		"vp8l.webp":      {"RIFF\x12\x00\x00\x00WEBPVP8L\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00", "not a valid WebP image: its VP8L chunk has no lossless signature"},
		"vp8.webp":       {"RIFF\x16\x00\x00\x00WEBPVP8 \x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "not a valid WebP image: its VP8 chunk does not start with a key frame"},
		"vp8zero.webp":   {"RIFF\x16\x00\x00\x00WEBPVP8 \x0a\x00\x00\x00\x30\x01\x00\x9d\x01\x2a\x00\x00\x00\x00", "not a valid WebP image: it is 0×0 pixels"},
		"vp8xshort.webp": {"RIFF\x0e\x00\x00\x00WEBPVP8X\x02\x00\x00\x00ab", "not a valid WebP image: its VP8X chunk is too short"},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadImage(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+": "+c.want) {
			t.Errorf("LoadImage(%s) = %v, want %q", name, err, c.want)
		}
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
		{justOver, justOver + ": 3,932,161 bytes is over the 3,932,160-byte image limit"},
		{write("over4k.png", append([]byte(imageHeads[MimePNG]), make([]byte, MaxImageBytes+6000-len(imageHeads[MimePNG]))...)), "over4k.png: 3.76 MB is over the 3.75 MB image limit"},
		{write("x.txt", []byte("just text\n")), "x.txt: not a PNG, JPEG, GIF or WebP image"},
		{write("fake.png", []byte("PNG but not really")), "fake.png: not a PNG, JPEG, GIF or WebP image"},
		{write("riff.webp", []byte("RIFF\x00\x00\x00\x00WAVE")), "riff.webp: not a PNG, JPEG, GIF or WebP image"},
		{write("magic.png", []byte("\x89PNG\r\n\x1a\n")), "magic.png: not a valid PNG image: the file ends inside its header"},
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
		"magic.png": "\x89PNG\r\n\x1a\n",
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
		`{"path":"magic.png"}`: "view_image: magic.png: not a valid PNG image: the file ends inside its header",
		`{"path":""}`:          "view_image: path is empty",
	} {
		res := call(t, Env{Dir: dir}, "view_image", input)
		if !res.IsError || res.Content != wantText || res.Attachments != nil {
			t.Errorf("view_image %s = %+v, want error %q", input, res, wantText)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", MaxImageBytes: "3,932,160", 1234567890: "1,234,567,890"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
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
