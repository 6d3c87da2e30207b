// Package jsonerr places encoding/json errors in the text they came from,
// for messages of the form path:line: reason.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Line returns the 1-based line of data that err, from decoding data,
// points at; ok is false when err carries no offset.
func Line(data []byte, err error) (line int, ok bool) {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return 0, false
	}
	off = min(off, int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'}), true
}
