package provider

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// sseMaxLine bounds one SSE line. Responses API terminal events echo the
// whole request (instructions, tool schemas) and encrypted reasoning runs to
// kilobytes, so the bound is generous; it only stops a runaway peer.
const sseMaxLine = 32 << 20

// maxEventBytes bounds the data of one SSE event (its data lines joined)
// and a non-streamed response body: a server that never ends an event
// would otherwise grow awl's memory without bound while the idle timer,
// fed by arriving bytes, never fires.
const maxEventBytes = 64 << 20

// errSSELineTooLong is returned when a single line exceeds sseMaxLine. Its
// text is a constant (TestSSELineLimitText checks it against sizeText):
// one computed at package level needs an initialiser at every start.
var errSSELineTooLong = &wireError{kind: KindRequest, msg: "the server sent an SSE line over the 32 MiB limit"}

// sizeText writes a byte count in MiB or KiB, or bytes when smaller.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// tooLarge is the failure of a response part over its limit: a provider
// error naming the limit, not retried (the same server would do it again).
func tooLarge(what string, limit int) *wireError {
	return &wireError{kind: KindRequest, msg: "the server sent " + what + " over the " + sizeText(limit) + " limit"}
}

// sseDecoder splits a text/event-stream into events. It owns one read buffer
// and one data buffer, both reused, so decoding allocates only when a line or
// an event payload outgrows what it has seen before.
//
// The fields it understands are event and data; comments (lines starting with
// ':'), id and retry are skipped. Lines end in LF, CRLF or a lone CR. Several
// data lines in one event are joined with LF, as the SSE specification says.
type sseDecoder struct {
	r    io.Reader
	buf  []byte
	head int // start of unread bytes in buf
	tail int // end of valid bytes in buf
	err  error
	// skipLF is set when the previous line ended in CR at the very end of
	// the buffered bytes: a following LF belongs to that line ending.
	skipLF bool
	// scanned counts the bytes from head already searched for a line
	// ending and found to hold none: a long line arriving a packet at a
	// time is searched once, not again from its start after each read.
	scanned int
	// searched counts every byte searched for a line ending: its tests
	// hold it to a small multiple of the stream's size.
	searched int

	event   []byte
	data    []byte
	hasData bool
	// maxEvent bounds len(data); tests lower it.
	maxEvent int
}

// newSSEDecoder returns a decoder reading from r.
func newSSEDecoder(r io.Reader) *sseDecoder {
	return &sseDecoder{r: r, buf: make([]byte, 64<<10), maxEvent: maxEventBytes}
}

// Next returns the next event's name (possibly empty) and data. The slices
// are valid only until the following call. At the end of the stream it
// returns io.EOF, or the reader's error. An event not followed by a blank
// line (or whose last line lacks its line ending) is still delivered at
// EOF: callers require a terminal event, so a truncated stream fails anyway.
func (d *sseDecoder) Next() (event, data []byte, err error) {
	d.event = d.event[:0]
	d.data = d.data[:0]
	d.hasData = false
	for {
		line, err := d.line()
		if err != nil {
			if d.hasData && errors.Is(err, io.EOF) {
				d.hasData = false
				return d.event, d.data, nil
			}
			return nil, nil, err
		}
		if len(line) == 0 {
			if d.hasData {
				return d.event, d.data, nil
			}
			d.event = d.event[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) { // no allocation: the compiler compares in place
		case "data":
			sep := 0
			if d.hasData {
				sep = 1
			}
			if len(d.data)+sep+len(value) > d.maxEvent {
				return nil, nil, tooLarge("one SSE event", d.maxEvent)
			}
			if d.hasData {
				d.data = append(d.data, '\n')
			}
			d.data = append(d.data, value...)
			d.hasData = true
		case "event":
			d.event = append(d.event[:0], value...)
		}
	}
}

// line returns the next line without its ending. The slice aliases the read
// buffer and is valid until the next call.
func (d *sseDecoder) line() ([]byte, error) {
	for {
		if d.skipLF && d.head < d.tail {
			if d.buf[d.head] == '\n' {
				d.head++
			}
			d.skipLF = false
		}
		window := d.buf[d.head:d.tail]
		end := bytes.IndexByte(window[d.scanned:], '\n')
		search := window[d.scanned:]
		if end >= 0 {
			end += d.scanned
			search = window[d.scanned:end]
		}
		d.searched += len(window) - d.scanned + len(search)
		if cr := bytes.IndexByte(search, '\r'); cr >= 0 {
			cr += d.scanned
			d.scanned = 0
			line := window[:cr]
			switch {
			case cr+1 < len(window):
				if window[cr+1] == '\n' {
					d.head += cr + 2
				} else {
					d.head += cr + 1
				}
			default:
				d.head += cr + 1
				d.skipLF = true
			}
			return line, nil
		}
		if end >= 0 {
			d.scanned = 0
			d.head += end + 1
			return window[:end], nil
		}
		if d.err != nil {
			d.scanned = 0
			if len(window) > 0 {
				// The stream ended without a final line ending. Deliver
				// the line: if it was cut short, the terminal event is
				// missing anyway and the attempt fails as incomplete.
				d.head = d.tail
				return window, nil
			}
			return nil, d.err
		}
		d.scanned = len(window)
		if err := d.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more bytes, compacting or growing the buffer as needed.
func (d *sseDecoder) fill() error {
	if d.head > 0 {
		n := copy(d.buf, d.buf[d.head:d.tail])
		d.head, d.tail = 0, n
	}
	if d.tail == len(d.buf) {
		if len(d.buf) >= sseMaxLine {
			return errSSELineTooLong
		}
		grown := make([]byte, 2*len(d.buf))
		copy(grown, d.buf[:d.tail])
		d.buf = grown
	}
	for range 100 {
		n, err := d.r.Read(d.buf[d.tail:])
		d.tail += n
		if err != nil {
			d.err = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	d.err = io.ErrNoProgress
	return nil
}
