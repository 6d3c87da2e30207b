package tool

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/awlrun/awl/conv"
)

// MaxImageBytes is the largest image file, in raw bytes, that LoadImage
// accepts: 3.75 MiB.
//
// It is set by the strictest provider, Anthropic, whose Messages API rejects
// an image whose base64 data is over 5 MiB (5,242,880 bytes: "image exceeds
// 5 MB maximum"). OpenAI accepts larger images (up to 50 MB per request) and
// Anthropic's 32 MB request cap is looser still. Base64 grows data by 4/3,
// so 5 MiB of base64 is 3.75 MiB of file. Checking the raw file against 5 MiB
// instead would let a 4.5 MB screenshot into the session log, where it is
// durable history: every later request of that session, resumed ones too,
// would then be refused.
const MaxImageBytes = MaxImageBase64Bytes / 4 * 3

// MaxImageBase64Bytes is the provider limit MaxImageBytes derives from: the
// length of an image's base64 data.
const MaxImageBase64Bytes = 5 << 20

// Image MIME types LoadImage detects.
const (
	MimePNG  = "image/png"
	MimeJPEG = "image/jpeg"
	MimeGIF  = "image/gif"
	MimeWebP = "image/webp"
)

// sniffImage returns the MIME type of the image format whose signature head
// starts with, or "" when it is none of PNG, JPEG, GIF and WebP.
func sniffImage(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return MimePNG
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return MimeJPEG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return MimeGIF
	case len(head) >= 12 && bytes.Equal(head[:4], []byte("RIFF")) && bytes.Equal(head[8:12], []byte("WEBP")):
		return MimeWebP
	}
	return ""
}

// LoadImage reads an image file for `--image` and view_image. The format is
// detected from the bytes, not the extension: PNG, JPEG, GIF or WebP. A file
// over MaxImageBytes is refused before it is read. The image must be
// well-formed enough for a provider to take it: its header decodes and it
// has pixels (a file that is only a format's magic number would become
// durable history that every later request of the session is refused for).
// The attachment carries the data in standard base64. Errors name path as
// given and say what is wrong, e.g. "x.txt: not a PNG, JPEG, GIF or WebP
// image", "x.png: not a valid PNG image: the file ends inside its header" or
// "big.png: 20.0 MB is over the 3.75 MB image limit"; a missing file's error
// matches fs.ErrNotExist.
func LoadImage(path string) (conv.Attachment, error) {
	att, _, err := loadImage(path, path, nil)
	return att, err
}

// loadImage is LoadImage reading file, naming it path in errors, and also
// returning the raw size. judge, when not nil, judges the file once open.
func loadImage(path, file string, judge func(f *os.File) error) (conv.Attachment, int, error) {
	f, st, err := openRegular(file)
	switch {
	case err != nil:
		return conv.Attachment{}, 0, imageErr(path, err)
	case st.IsDir():
		return conv.Attachment{}, 0, fmt.Errorf("%s: is a directory, not an image", path)
	case f == nil:
		return conv.Attachment{}, 0, fmt.Errorf("%s: is %s, not an image", path, fileKind(st.Mode()))
	}
	defer f.Close()
	if judge != nil {
		if err := judge(f); err != nil {
			return conv.Attachment{}, 0, err
		}
	}
	if st.Size() > MaxImageBytes {
		return conv.Attachment{}, 0, overLimit(path, st.Size())
	}
	// The file may grow after Stat; never read more than one byte past
	// the limit.
	data, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1))
	if err != nil {
		return conv.Attachment{}, 0, imageErr(path, err)
	}
	att, err := imageFromBytes(path, data)
	return att, len(data), err
}

// imageFromBytes is the attachment of data, an image's bytes, checked as
// LoadImage checks a file's; path names it in errors.
func imageFromBytes(path string, data []byte) (conv.Attachment, error) {
	if len(data) > MaxImageBytes {
		return conv.Attachment{}, overLimit(path, int64(len(data)))
	}
	mime := sniffImage(data)
	if mime == "" {
		return conv.Attachment{}, fmt.Errorf("%s: not a PNG, JPEG, GIF or WebP image", path)
	}
	if err := checkImage(mime, data); err != nil {
		return conv.Attachment{}, fmt.Errorf("%s: not a valid %s image: %w", path, formatName(mime), err)
	}
	return conv.Attachment{Type: "image", MimeType: mime, Data: base64.StdEncoding.EncodeToString(data)}, nil
}

// ImageData is the attachment of an image given as standard base64 (the
// input channel's `data`), checked as LoadImage checks a file: the format
// from the bytes, the size limit (over it, nothing is decoded), a header
// that decodes. name names it in errors.
func ImageData(name, b64 string) (conv.Attachment, error) {
	if len(b64) > MaxImageBase64Bytes {
		return conv.Attachment{}, fmt.Errorf("%s: %s bytes of base64 is over the %s-byte limit (the %s image limit)", name, thousands(int64(len(b64))), thousands(MaxImageBase64Bytes), megabytes(MaxImageBytes))
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return conv.Attachment{}, fmt.Errorf("%s: not standard base64: %v", name, err)
	}
	return imageFromBytes(name, data)
}

// formatName is the name of an image MIME type's format, for errors. (A
// switch: a package-level map is built by an initialiser at every start
// of awl.)
func formatName(mime string) string {
	switch mime {
	case MimePNG:
		return "PNG"
	case MimeJPEG:
		return "JPEG"
	case MimeGIF:
		return "GIF"
	case MimeWebP:
		return "WebP"
	}
	return ""
}

// checkImage reports what makes data, sniffed as mime, an image a provider
// would refuse: one its decoder cannot read the header of, or with no
// pixels. Only the header is read (imagehead.go) (for WebP, the RIFF container and the
// first chunk's header), not the pixels.
func checkImage(mime string, data []byte) error {
	var cfg imageSize
	var err error
	switch mime {
	case MimePNG:
		cfg, err = pngSize(data)
	case MimeJPEG:
		cfg, err = jpegSize(data)
	case MimeGIF:
		cfg, err = gifSize(data)
	case MimeWebP:
		cfg, err = webpConfig(data)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the file ends inside its header")
	}
	if err != nil {
		return err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("it is %d×%d pixels", cfg.Width, cfg.Height)
	}
	return nil
}

// webpConfig checks a WebP file's RIFF container and first chunk, and
// returns its dimensions. The standard library has no WebP decoder.
func webpConfig(data []byte) (imageSize, error) {
	var cfg imageSize
	if len(data) < 20 {
		return cfg, io.ErrUnexpectedEOF
	}
	// The RIFF size counts the bytes after it; a chunk of odd size is
	// followed by a pad byte that some writers leave out of the count.
	size := int64(binary.LittleEndian.Uint32(data[4:8]))
	if n := int64(len(data)) - 8; size != n && !(size%2 == 1 && size+1 == n) {
		return cfg, fmt.Errorf("its RIFF size says %d bytes, the file has %d after the RIFF header", size, n)
	}
	fourcc := string(data[12:16])
	chunk := int64(binary.LittleEndian.Uint32(data[16:20]))
	body := data[20:]
	if chunk > int64(len(body)) {
		return cfg, fmt.Errorf("its %q chunk says %d bytes, the file has %d", fourcc, chunk, len(body))
	}
	body = body[:chunk]
	switch fourcc {
	case "VP8L": // lossless: signature 0x2f, then 14-bit width-1 and height-1
		if len(body) < 5 || body[0] != 0x2f {
			return cfg, errors.New("its VP8L chunk has no lossless signature")
		}
		bits := binary.LittleEndian.Uint32(body[1:5])
		if bits>>29 != 0 {
			return cfg, errors.New("its VP8L chunk has an unknown version")
		}
		cfg.Width, cfg.Height = int(bits&0x3fff)+1, int(bits>>14&0x3fff)+1
	case "VP8 ": // lossy: a key frame's tag, start code, 14-bit width and height
		if len(body) < 10 || body[0]&1 != 0 || !bytes.Equal(body[3:6], []byte{0x9d, 0x01, 0x2a}) {
			return cfg, errors.New("its VP8 chunk does not start with a key frame")
		}
		cfg.Width = int(binary.LittleEndian.Uint16(body[6:8]) & 0x3fff)
		cfg.Height = int(binary.LittleEndian.Uint16(body[8:10]) & 0x3fff)
	case "VP8X": // extended: flags, reserved, 24-bit canvas width-1 and height-1
		if len(body) < 10 {
			return cfg, errors.New("its VP8X chunk is too short")
		}
		u24 := func(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }
		cfg.Width, cfg.Height = u24(body[4:7])+1, u24(body[7:10])+1
	default:
		return cfg, fmt.Errorf("its first chunk is %q, not VP8, VP8L or VP8X", fourcc)
	}
	return cfg, nil
}

func overLimit(path string, size int64) error {
	have, limit := megabytes(size), megabytes(MaxImageBytes)
	if have == limit {
		// Rounded, the two look the same: say it in bytes.
		return fmt.Errorf("%s: %s bytes is over the %s-byte image limit", path, thousands(size), thousands(MaxImageBytes))
	}
	return fmt.Errorf("%s: %s is over the %s image limit", path, have, limit)
}

// thousands formats n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// megabytes formats n bytes in MB of 2^20 bytes: "20.0 MB", "3.75 MB".
func megabytes(n int64) string {
	mb := float64(n) / (1 << 20)
	s := fmt.Sprintf("%.2f", mb)
	if s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return s + " MB"
}

// imageErr names path and keeps the cause matchable with errors.Is.
func imageErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", path, err)
}

var viewImageParams = params{
	{name: "path", kind: kindString, required: true, desc: "The image file (PNG, JPEG, GIF or WebP), absolute or relative to the working directory."},
}

type viewImageTool struct{ env Env }

const viewImageDescription = "Look at an image file: PNG, JPEG, GIF or WebP, detected from its bytes, at most 3.75 MB. The image is attached to the result."

type viewImageArgs struct {
	Path string `json:"path"`
}

func (t viewImageTool) run(_ context.Context, in viewImageArgs) Result {
	if in.Path == "" {
		return errorf("view_image: path is empty")
	}
	att, size, err := loadImage(in.Path, t.env.resolve(in.Path), func(f *os.File) error {
		return t.env.judgeFD("view_image", f.Fd(), f.Name())
	})
	var pd *policyDenied
	if errors.As(err, &pd) {
		return errorf("%v", pd.err)
	}
	if err != nil {
		return errorf("view_image: %v", err)
	}
	return Result{
		Content:     fmt.Sprintf("image %s (%s, %d bytes)", in.Path, att.MimeType, size),
		Attachments: []conv.Attachment{att},
	}
}
