package tool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The PNG, JPEG and GIF headers are read here, not by image/png,
// image/jpeg and image/gif: only a header is ever read, and those
// packages register their whole decoders at start-up, which linked 310 KB
// into every run and kept about 0.2 MiB more of the binary resident in a
// text run that never looks at an image (issue 27's memory target).
// TestHeadersAgreeWithTheStandardDecoders holds these readers to the
// standard library's DecodeConfig.

// imageSize is what a header says of an image's pixels.
type imageSize struct{ Width, Height int }

// pngSize reads a PNG file's IHDR chunk, which must come first: its
// length, its CRC, the dimensions (at most 2^31-1 each), and a bit depth
// that its colour type allows.
func pngSize(data []byte) (imageSize, error) {
	const sigLen = 8
	if len(data) < sigLen+8+13+4 {
		return imageSize{}, io.ErrUnexpectedEOF
	}
	chunk := data[sigLen:]
	if n := binary.BigEndian.Uint32(chunk); string(chunk[4:8]) != "IHDR" || n != 13 {
		return imageSize{}, fmt.Errorf("its first chunk is %q of %d bytes, not a 13-byte IHDR", chunk[4:8], n)
	}
	ihdr := chunk[8 : 8+13]
	if crc32.ChecksumIEEE(chunk[4:8+13]) != binary.BigEndian.Uint32(chunk[8+13:]) {
		return imageSize{}, errors.New("its IHDR chunk fails its checksum")
	}
	w, h := binary.BigEndian.Uint32(ihdr[0:4]), binary.BigEndian.Uint32(ihdr[4:8])
	if w > 1<<31-1 || h > 1<<31-1 {
		return imageSize{}, fmt.Errorf("its size, %d×%d, is over 2^31-1 pixels a side", w, h)
	}
	depth, colour := ihdr[8], ihdr[9]
	depths := map[byte]string{0: "\x01\x02\x04\x08\x10", 2: "\x08\x10", 3: "\x01\x02\x04\x08", 4: "\x08\x10", 6: "\x08\x10"}[colour]
	if !containsByte(depths, depth) {
		return imageSize{}, fmt.Errorf("its colour type %d with bit depth %d is not a PNG's", colour, depth)
	}
	if ihdr[10] != 0 || ihdr[11] != 0 || ihdr[12] > 1 {
		return imageSize{}, fmt.Errorf("its compression, filter or interlace method (%d, %d, %d) is not a PNG's", ihdr[10], ihdr[11], ihdr[12])
	}
	if colour == 3 {
		if err := pngPalette(data[sigLen+8+13+4:], depth); err != nil {
			return imageSize{}, err
		}
	}
	return imageSize{int(w), int(h)}, nil
}

// pngPalette checks that a paletted PNG's palette comes before its pixel
// data, and fits its bit depth: the chunks from the one after IHDR to
// PLTE, each whole and with its CRC.
func pngPalette(chunks []byte, depth byte) error {
	for {
		if len(chunks) < 12 {
			return io.ErrUnexpectedEOF
		}
		n, typ := binary.BigEndian.Uint32(chunks), string(chunks[4:8])
		if uint64(n)+12 > uint64(len(chunks)) {
			return io.ErrUnexpectedEOF
		}
		if crc32.ChecksumIEEE(chunks[4:8+n]) != binary.BigEndian.Uint32(chunks[8+n:]) {
			return fmt.Errorf("its %q chunk fails its checksum", typ)
		}
		switch typ {
		case "PLTE":
			if np := n / 3; n%3 != 0 || np == 0 || np > 256 || np > 1<<depth {
				return fmt.Errorf("its palette is %d bytes, for a bit depth of %d", n, depth)
			}
			return nil
		case "IHDR", "tRNS", "IDAT", "IEND":
			return fmt.Errorf("its %q chunk comes before its palette", typ)
		}
		chunks = chunks[12+n:]
	}
}

func containsByte(s string, b byte) bool {
	for i := range len(s) {
		if s[i] == b {
			return true
		}
	}
	return false
}

// gifSize reads a GIF's logical screen descriptor, and checks that its
// global colour table, when it says it has one, is all there.
func gifSize(data []byte) (imageSize, error) {
	const head = 6 + 7
	if len(data) < head {
		return imageSize{}, io.ErrUnexpectedEOF
	}
	flags := data[10]
	if flags&0x80 != 0 && len(data) < head+3<<(flags&7+1) {
		return imageSize{}, io.ErrUnexpectedEOF
	}
	return imageSize{int(binary.LittleEndian.Uint16(data[6:8])), int(binary.LittleEndian.Uint16(data[8:10]))}, nil
}

// jpegSize walks a JPEG's markers from SOI to its frame header (SOF),
// stepping over each segment by its length, and reads the frame's size.
// As image/jpeg (and libjpeg), it steps over stray bytes between
// segments. It takes baseline, extended sequential and progressive
// Huffman frames of 8-bit samples with 1, 3 or 4 components, and refuses
// the others (lossless, hierarchical, arithmetic coding), which few
// decoders read.
func jpegSize(data []byte) (imageSize, error) {
	p := 2 // after SOI
	next := func() (byte, bool) {
		if p >= len(data) {
			return 0, false
		}
		p++
		return data[p-1], true
	}
	for {
		b, ok := next()
		for ok && b != 0xFF { // stray bytes
			b, ok = next()
		}
		code, ok := next()
		if ok && code == 0x00 { // a stuffed 0xFF: more stray bytes
			continue
		}
		for ok && code == 0xFF { // fill bytes
			code, ok = next()
		}
		if !ok {
			return imageSize{}, io.ErrUnexpectedEOF
		}
		switch {
		case code >= 0xD0 && code <= 0xD7: // RSTn
			continue
		case code == 0xD9 || code == 0xDA:
			return imageSize{}, fmt.Errorf("marker 0x%02x comes before the frame header", code)
		}
		if p+2 > len(data) {
			return imageSize{}, io.ErrUnexpectedEOF
		}
		n := int(binary.BigEndian.Uint16(data[p:]))
		if n < 2 {
			return imageSize{}, fmt.Errorf("marker 0x%02x has a length of %d", code, n)
		}
		p += 2
		switch {
		case code >= 0xC0 && code <= 0xC2:
			if p+n-2 > len(data) {
				return imageSize{}, io.ErrUnexpectedEOF
			}
			return jpegFrame(data[p : p+n-2])
		case code >= 0xC3 && code <= 0xCF && code != 0xC4 && code != 0xC8 && code != 0xCC:
			return imageSize{}, fmt.Errorf("its frame type (SOF%d) is not baseline, extended or progressive", code-0xC0)
		case code != 0xC4 && code != 0xDB && code != 0xDD && code != 0xFE && (code < 0xE0 || code > 0xEF):
			// Only tables, a restart interval, application data and
			// comments come before a frame.
			return imageSize{}, fmt.Errorf("marker 0x%02x comes before the frame header", code)
		}
		if p+n-2 > len(data) {
			return imageSize{}, io.ErrUnexpectedEOF
		}
		p += n - 2
	}
}

// jpegFrame reads a frame header's segment (after its length): 8-bit
// samples, 1, 3 or 4 components with distinct identifiers, sampling
// factors from 1 to 4 and quantisation tables 0 to 3.
func jpegFrame(seg []byte) (imageSize, error) {
	if len(seg) != 6+3*1 && len(seg) != 6+3*3 && len(seg) != 6+3*4 {
		return imageSize{}, fmt.Errorf("its frame header is %d bytes, not that of 1, 3 or 4 components", len(seg))
	}
	if seg[0] != 8 {
		return imageSize{}, fmt.Errorf("its samples are %d-bit, not 8-bit", seg[0])
	}
	comps := int(seg[5])
	if len(seg) != 6+3*comps {
		return imageSize{}, fmt.Errorf("its frame header is %d bytes for %d components", len(seg), comps)
	}
	for i := range comps {
		c := seg[6+3*i:]
		for j := range i {
			if seg[6+3*j] == c[0] {
				return imageSize{}, fmt.Errorf("its frame has component %d twice", c[0])
			}
		}
		if h, v := c[1]>>4, c[1]&15; h < 1 || h > 4 || v < 1 || v > 4 {
			return imageSize{}, fmt.Errorf("its component %d has sampling factors %d×%d", c[0], h, v)
		}
		if c[2] > 3 {
			return imageSize{}, fmt.Errorf("its component %d uses quantisation table %d", c[0], c[2])
		}
	}
	return imageSize{int(binary.BigEndian.Uint16(seg[3:5])), int(binary.BigEndian.Uint16(seg[1:3]))}, nil
}
