package tool

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"testing"
)

// stdSize is the standard library's reading of an image's header: the
// size, and whether it would take the file (a header it decodes, and
// pixels).
func stdSize(mime string, data []byte) (imageSize, bool) {
	var cfg image.Config
	var err error
	switch mime {
	case MimePNG:
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
	case MimeJPEG:
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
	case MimeGIF:
		cfg, err = gif.DecodeConfig(bytes.NewReader(data))
	}
	return imageSize{cfg.Width, cfg.Height}, err == nil && cfg.Width > 0 && cfg.Height > 0
}

// realImages are files the standard encoders write: several sizes and
// colour models of each format.
func realImages(t *testing.T) map[string][]string {
	t.Helper()
	enc := func(f func(io.Writer) error) string {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := map[string][]string{}
	for _, r := range []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(0, 0, 3, 2), image.Rect(0, 0, 640, 1), image.Rect(0, 0, 257, 4099)} {
		for _, m := range []image.Image{image.NewRGBA(r), image.NewGray(r), image.NewGray16(r), image.NewNRGBA64(r), image.NewPaletted(r, palette.Plan9), image.NewPaletted(r, color.Palette{color.Black, color.White})} {
			out[MimePNG] = append(out[MimePNG], enc(func(w io.Writer) error { return png.Encode(w, m) }))
		}
		for _, m := range []image.Image{image.NewRGBA(r), image.NewGray(r), image.NewYCbCr(r, image.YCbCrSubsampleRatio420)} {
			out[MimeJPEG] = append(out[MimeJPEG], enc(func(w io.Writer) error { return jpeg.Encode(w, m, &jpeg.Options{Quality: 50}) }))
		}
		for _, m := range []image.Image{image.NewRGBA(r), image.NewPaletted(r, color.Palette{color.Black, color.White})} {
			out[MimeGIF] = append(out[MimeGIF], enc(func(w io.Writer) error { return gif.Encode(w, m, nil) }))
		}
	}
	return out
}

// The header readers agree with image/png, image/jpeg and image/gif,
// which awl no longer links: on real files the same size, and on every
// cut of a file's header and every change of a header byte, the same
// verdict (and, when both take it, the same size). For JPEG the bytes
// changed are the frame header's and the markers' before it; the
// standard decoder also parses the tables, which awl only steps over.
func TestHeadersAgreeWithTheStandardDecoders(t *testing.T) {
	checked := 0
	compare := func(mime, what string, data []byte) {
		t.Helper()
		checked++
		want, stdOK := stdSize(mime, data)
		err := checkImage(mime, data)
		switch {
		case stdOK && err != nil:
			t.Errorf("%s %s: refused (%v); the standard decoder reads %d×%d", mime, what, err, want.Width, want.Height)
		case !stdOK && err == nil:
			t.Errorf("%s %s: taken; the standard decoder refuses it", mime, what)
		}
	}
	for mime, files := range realImages(t) {
		for i, f := range files {
			data := []byte(f)
			want, ok := stdSize(mime, data)
			got, err := map[string]func([]byte) (imageSize, error){MimePNG: pngSize, MimeJPEG: jpegSize, MimeGIF: gifSize}[mime](data)
			if !ok || err != nil || got != want {
				t.Fatalf("%s #%d: %v %v, the standard decoder %v %v", mime, i, got, err, want, ok)
			}
			head := headerLen(t, mime, data)
			for n := len(sniffHead(mime)); n < head; n++ {
				compare(mime, "cut at "+itoa(n), data[:n])
			}
			for p := len(sniffHead(mime)); p < head; p++ {
				for _, v := range []byte{0, 1, 2, 3, 4, 7, 8, 9, 0x10, 0x11, 0x7f, 0x80, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xd9, 0xda, 0xfe, 0xff} {
					if data[p] == v {
						continue
					}
					m := append([]byte(nil), data...)
					m[p] = v
					if mime == MimePNG && p >= 12 && p < 29 {
						m = []byte(pngIHDR(string(m), 0)) // the CRC made to match, or only the CRC is ever tested
					}
					compare(mime, "byte "+itoa(p)+"="+itoa(int(v)), m)
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d variants checked", checked)
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// sniffHead is the part of a file sniffImage looks at, left as it is.
func sniffHead(mime string) string {
	return map[string]string{MimePNG: "\x89PNG\r\n\x1a\n", MimeJPEG: "\xff\xd8", MimeGIF: "GIF89a"}[mime]
}

// headerLen is how much of data the header reader reads: the IHDR chunk;
// the palette of a paletted PNG; the screen descriptor and the global
// colour table; the markers up to
// the end of the frame header, past the tables.
func headerLen(t *testing.T, mime string, data []byte) int {
	switch mime {
	case MimePNG:
		if i := bytes.Index(data, []byte("PLTE")); i > 0 && data[25] == 3 {
			return i + 4 + int(binary.BigEndian.Uint32(data[i-4:])) + 4 // type, data, CRC
		}
		return 33
	case MimeGIF:
		n := 13
		if data[10]&0x80 != 0 {
			n += 3 << (data[10]&7 + 1)
		}
		return min(n, 13+8)
	}
	i := bytes.Index(data, []byte{0xff, 0xc0})
	if i < 0 {
		t.Fatal("no SOF0 in a JPEG the standard encoder wrote")
	}
	return i + 2 + int(binary.BigEndian.Uint16(data[i+2:]))
}
