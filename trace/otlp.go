// Package trace exports a run's OpenTelemetry trace: spans built from awl's
// event stream (Builder), encoded as an OTLP ExportTraceServiceRequest in
// protobuf and sent over HTTP at exit (Export).
//
// It is a leaf with no awl imports and no OpenTelemetry SDK: the SDK, its
// protobuf runtime and gRPC would add megabytes to the binary and package
// initialisers to every start, tracing on or off. The OTLP messages awl
// sends are a handful of fields, written here by hand from
// opentelemetry-proto's definitions; the tests decode them with the
// official generated types (go.opentelemetry.io/proto/otlp).
package trace

import (
	"encoding/binary"
	"math"
	"time"
)

// Span kinds (opentelemetry.proto.trace.v1.Span.SpanKind).
const (
	KindInternal = 1
	KindClient   = 3
)

// Status codes (opentelemetry.proto.trace.v1.Status.StatusCode).
const (
	StatusUnset = 0
	StatusOK    = 1
	StatusError = 2
)

// Span is one finished span.
type Span struct {
	TraceID    [16]byte
	SpanID     [8]byte
	Parent     [8]byte // zero for a root
	TraceState string
	Name       string
	Kind       int
	Start, End time.Time
	Attrs      []KV
	Events     []Event
	Status     int
	StatusMsg  string
}

// Event is a span event (a retry, say).
type Event struct {
	Time  time.Time
	Name  string
	Attrs []KV
}

// KV is an attribute. Value is a string, bool, int64, float64 or []string.
type KV struct {
	Key   string
	Value any
}

// Str, Int, Float and Bool make attributes.
func Str(k, v string) KV       { return KV{k, v} }
func Int(k string, v int64) KV { return KV{k, v} }
func Float(k string, v float64) KV {
	return KV{k, v}
}
func Bool(k string, v bool) KV { return KV{k, v} }

// Encode returns the ExportTraceServiceRequest holding spans, with one
// resource (attrs) and one instrumentation scope (name, version).
func Encode(resource []KV, scope, version string, spans []Span) []byte {
	var res []byte
	for _, kv := range resource {
		res = msgField(res, 1, encodeKV(kv))
	}
	var sc []byte
	sc = strField(sc, 1, scope)
	sc = strField(sc, 2, version)
	var ss []byte
	ss = msgField(ss, 1, sc)
	for i := range spans {
		ss = msgField(ss, 2, encodeSpan(&spans[i]))
	}
	var rs []byte
	rs = msgField(rs, 1, res)
	rs = msgField(rs, 2, ss)
	return msgField(nil, 1, rs)
}

func encodeSpan(s *Span) []byte {
	var b []byte
	b = bytesField(b, 1, s.TraceID[:])
	b = bytesField(b, 2, s.SpanID[:])
	b = strField(b, 3, s.TraceState)
	if s.Parent != ([8]byte{}) {
		b = bytesField(b, 4, s.Parent[:])
	}
	b = strField(b, 5, s.Name)
	b = varintField(b, 6, uint64(s.Kind))
	b = fixed64Field(b, 7, unixNano(s.Start))
	b = fixed64Field(b, 8, unixNano(s.End))
	for _, kv := range s.Attrs {
		b = msgField(b, 9, encodeKV(kv))
	}
	for _, ev := range s.Events {
		var e []byte
		e = fixed64Field(e, 1, unixNano(ev.Time))
		e = strField(e, 2, ev.Name)
		for _, kv := range ev.Attrs {
			e = msgField(e, 3, encodeKV(kv))
		}
		b = msgField(b, 11, e)
	}
	if s.Status != StatusUnset || s.StatusMsg != "" {
		var st []byte
		st = strField(st, 2, s.StatusMsg)
		st = varintField(st, 3, uint64(s.Status))
		b = msgField(b, 15, st)
	}
	// flags: the W3C trace flags (sampled) in the low byte.
	b = appendTag(b, 16, 5)
	return binary.LittleEndian.AppendUint32(b, 1)
}

func encodeKV(kv KV) []byte {
	var b []byte
	b = strField(b, 1, kv.Key)
	return msgField(b, 2, encodeAny(kv.Value))
}

func encodeAny(v any) []byte {
	var b []byte
	switch v := v.(type) {
	case string:
		b = appendTag(b, 1, 2)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	case bool:
		n := uint64(0)
		if v {
			n = 1
		}
		b = appendTag(b, 2, 0)
		b = binary.AppendUvarint(b, n)
	case int64:
		b = appendTag(b, 3, 0)
		b = binary.AppendUvarint(b, uint64(v))
	case float64:
		b = appendTag(b, 4, 1)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	case []string:
		var arr []byte
		for _, s := range v {
			arr = msgField(arr, 1, encodeAny(s))
		}
		b = appendTag(b, 5, 2)
		b = binary.AppendUvarint(b, uint64(len(arr)))
		b = append(b, arr...)
	}
	return b
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field<<3|wire))
}

func msgField(b []byte, field int, msg []byte) []byte {
	b = appendTag(b, field, 2)
	b = binary.AppendUvarint(b, uint64(len(msg)))
	return append(b, msg...)
}

func bytesField(b []byte, field int, v []byte) []byte { return msgField(b, field, v) }

func strField(b []byte, field int, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, field, 2)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func varintField(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, 0), v)
}

func fixed64Field(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, 1), v)
}
