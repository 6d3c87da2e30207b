package tool

import (
	"encoding/base64"
	"fmt"

	"github.com/awlrun/awl/conv"
)

// ImageAttachment checks image bytes that came from elsewhere than a file
// (an MCP server's image result) the way view_image checks a file: PNG,
// JPEG, GIF or WebP detected from the bytes, at most MaxImageBytes, with a
// header that decodes and pixels. It returns them as an attachment.
func ImageAttachment(data []byte) (conv.Attachment, error) {
	if len(data) > MaxImageBytes {
		return conv.Attachment{}, overLimit("image", int64(len(data)))
	}
	mime := sniffImage(data)
	if mime == "" {
		return conv.Attachment{}, fmt.Errorf("not a PNG, JPEG, GIF or WebP image")
	}
	if err := checkImage(mime, data); err != nil {
		return conv.Attachment{}, fmt.Errorf("not a valid %s image: %w", formatName(mime), err)
	}
	return conv.Attachment{Type: "image", MimeType: mime, Data: base64.StdEncoding.EncodeToString(data)}, nil
}
