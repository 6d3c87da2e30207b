package tool

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"

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
// over MaxImageBytes is refused before it is read. The attachment carries the
// data in standard base64. Errors name path as given and say what is wrong,
// e.g. "x.txt: not a PNG, JPEG, GIF or WebP image" or "big.png: 20.0 MB is
// over the 3.75 MB image limit"; a missing file's error matches
// fs.ErrNotExist.
func LoadImage(path string) (conv.Attachment, error) {
	att, _, err := loadImage(path, path)
	return att, err
}

// loadImage is LoadImage reading file, naming it path in errors, and also
// returning the raw size.
func loadImage(path, file string) (conv.Attachment, int, error) {
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
	if st.Size() > MaxImageBytes {
		return conv.Attachment{}, 0, overLimit(path, st.Size())
	}
	// The file may grow after Stat; never read more than one byte past
	// the limit.
	data, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1))
	if err != nil {
		return conv.Attachment{}, 0, imageErr(path, err)
	}
	if len(data) > MaxImageBytes {
		return conv.Attachment{}, 0, overLimit(path, int64(len(data)))
	}
	mime := sniffImage(data)
	if mime == "" {
		return conv.Attachment{}, 0, fmt.Errorf("%s: not a PNG, JPEG, GIF or WebP image", path)
	}
	att := conv.Attachment{Type: "image", MimeType: mime, Data: base64.StdEncoding.EncodeToString(data)}
	return att, len(data), nil
}

func overLimit(path string, size int64) error {
	return fmt.Errorf("%s: %s is over the %s image limit", path, megabytes(size), megabytes(MaxImageBytes))
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
	att, size, err := loadImage(in.Path, t.env.resolve(in.Path))
	if err != nil {
		return errorf("view_image: %v", err)
	}
	return Result{
		Content:     fmt.Sprintf("image %s (%s, %d bytes)", in.Path, att.MimeType, size),
		Attachments: []conv.Attachment{att},
	}
}
