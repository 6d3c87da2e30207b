package event

import (
	"strconv"

	"github.com/awlrun/awl/internal/jsonstr"
)

// appendSession appends the session event as encoding/json writes it
// (HTML escaping off) with its newline. The session event is the first of
// every run, written before the first request: encoding/json spent about
// 0.6 ms there building its encoders for these types by reflection, once
// a process. TestSessionEventBytes holds the two to the same bytes.
func appendSession(b []byte, s *Session) []byte {
	b = appendBase(b, &s.Base)
	b = append(b, `,"schema":`...)
	b = strconv.AppendInt(b, int64(s.Schema), 10)
	b = appendField(b, "path", s.Path)
	b = appendField(b, "cwd", s.Cwd)
	b = appendField(b, "provider", s.Provider)
	b = appendField(b, "model", s.Model)
	b = append(b, `,"resumed":`...)
	b = strconv.AppendBool(b, s.Resumed)
	if s.Fork != nil {
		b = append(b, `,"forked_from":{"id":`...)
		b = jsonstr.Append(b, s.Fork.ID)
		b = appendField(b, "entry_id", s.Fork.EntryID)
		b = append(b, '}')
	}
	b = appendField(b, "stdin", s.Stdin)
	if s.Recovered {
		b = append(b, `,"recovered":true`...)
	}
	b = append(b, `,"tools":`...)
	b = appendStrings(b, s.Tools)
	b = appendSandbox(b, &s.Sandbox)
	if len(s.MCP) > 0 {
		b = append(b, `,"mcp":[`...)
		for i := range s.MCP {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMCPServer(b, &s.MCP[i])
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

// appendBase appends the common fields, opening the event's object.
func appendBase(b []byte, base *Base) []byte {
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, base.Type)
	b = appendField(b, "session_id", base.SessionID)
	return appendField(b, "timestamp", base.Timestamp)
}

// appendField appends ,"name":"value"; name needs no escaping.
func appendField(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonstr.Append(b, value)
}

// appendStrings appends a list of strings, null for a nil one.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, s)
	}
	return append(b, ']')
}

func appendSandbox(b []byte, sb *Sandbox) []byte {
	b = append(b, `,"sandbox":{"mode":`...)
	b = jsonstr.Append(b, sb.Mode)
	b = append(b, `,"network":`...)
	b = strconv.AppendBool(b, sb.Network)
	b = append(b, `,"abi":`...)
	b = strconv.AppendInt(b, int64(sb.ABI), 10)
	e := &sb.Enforced
	for _, f := range []struct {
		name string
		on   bool
	}{
		{`,"enforced":{"files":`, e.Files}, {`,"tcp":`, e.TCP}, {`,"udp":`, e.UDP},
		{`,"raw":`, e.Raw}, {`,"unix":`, e.Unix}, {`,"processes":`, e.Processes},
		{`,"proc":`, e.Proc}, {`,"git":`, e.Git},
	} {
		b = append(b, f.name...)
		b = strconv.AppendBool(b, f.on)
	}
	b = append(b, '}')
	if sb.Warning != "" {
		b = appendField(b, "warning", sb.Warning)
	}
	return append(b, '}')
}

func appendMCPServer(b []byte, m *MCPServer) []byte {
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, m.Name)
	b = appendField(b, "transport", m.Transport)
	b = appendField(b, "status", m.Status)
	b = append(b, `,"tools":`...)
	b = appendStrings(b, m.Tools)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, m.DurationMS, 10)
	if m.Error != "" {
		b = appendField(b, "error", m.Error)
	}
	return append(b, '}')
}
