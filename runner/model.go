package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/event"
)

// providerStream calls the provider. A panic inside it (a decoder bug met
// by a stream nobody foresaw, in any Provider) is a provider error, so the
// run ends as after any failed request: exit 5, its run entry and result
// event, the session valid.
func (r *run) providerStream(ctx context.Context, req provider.Request) (msg conv.Message, err error) {
	defer r.flushDeltas()
	defer func() {
		if v := recover(); v != nil {
			msg, err = conv.Message{}, &provider.Error{Kind: provider.KindRequest, Provider: r.cfg.Provider.Name(),
				Message: fmt.Sprintf("internal error while reading the response (please report it): %v", v)}
		}
	}()
	req.CacheTTL, req.CacheKey, req.ServiceTier = r.cfg.CacheTTL, r.cacheKey(), r.cfg.ServiceTier
	return r.streamThinking(ctx, req)
}

// cacheKey is the prompt cache key of the session's requests (OpenAI's
// prompt_cache_key): a hash of the id and time of the first entry of its
// active path. A fork copies its parent's path, first entry included, so
// every session of one fork tree, and every resumed step of each, has the
// same key and is routed to the same cache; it is a function of the log,
// the same in every process. It is taken at the run's first request,
// before a compaction lets the session forget the entries before it.
func (r *run) cacheKey() string {
	if r.key != "" || r.sess == nil {
		return r.key
	}
	path := r.sess.ActivePath()
	if len(path) == 0 {
		return ""
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %d", path[0].ID, path[0].Timestamp.UnixMilli()))
	r.key = "awl-" + hex.EncodeToString(sum[:12])
	return r.key
}

// stream sends req. With a schema in force it asks for the API's native
// structured output, until a server rejects that parameter: then, once
// and for the rest of the run, the schema instructions in the context and
// the output-schema gate carry it alone.
func (r *run) stream(ctx context.Context, req provider.Request) (conv.Message, error) {
	if r.schema != nil && !r.nativeOff {
		req.OutputSchema = r.schema.Raw
	}
	msg, err := r.providerStream(ctx, req)
	if err == nil || req.OutputSchema == nil || !provider.RejectsOutputSchema(err) {
		return msg, err
	}
	r.nativeOff = true
	note := fmt.Sprintf("the server rejected native structured output (%s); going on with the schema in the instructions and validating the answer", err)
	em := r.cfg.Events
	em.Emit(event.Notice{Base: em.Stamp("notice", r.res.SessionID), Message: note})
	if r.cfg.Notes != nil {
		fmt.Fprintln(r.cfg.Notes, "awl:", note)
	}
	req.OutputSchema = nil
	return r.providerStream(ctx, req)
}

func (r *run) onProviderEvent(ev provider.Event) {
	em := r.cfg.Events
	id := r.res.SessionID
	switch ev.Kind {
	case provider.EventRetry:
		if r.deltas != nil {
			r.deltas.Drop() // the retry voids the deltas before it
		}
		ev.Err = r.cfg.Redact.String(ev.Err)
		em.Emit(event.Retry{Base: em.Stamp("retry", id), Attempt: ev.Attempt, Status: ev.Status, WaitMS: ev.Wait.Milliseconds(), Error: ev.Err})
		if r.cfg.Notes != nil {
			what := ev.Err
			if ev.Status != 0 {
				what = fmt.Sprintf("HTTP %d: %s", ev.Status, ev.Err)
			}
			fmt.Fprintf(r.cfg.Notes, "awl: model request failed (%s); retry %d in %s\n", what, ev.Attempt, ev.Wait.Round(time.Millisecond))
		}
	case provider.EventTextDelta:
		r.emitDelta("text_delta", ev.Index, ev.Text)
	case provider.EventThinkingDelta:
		r.emitDelta("thinking_delta", ev.Index, ev.Text)
	}
}

// flushDeltas emits what emitDelta held back, at the end of a response.
func (r *run) flushDeltas() {
	if r.deltas == nil {
		return
	}
	em := r.cfg.Events
	r.deltas.Flush(func(kind string, index int, text string) {
		em.Emit(event.Delta{Base: em.Stamp(kind, r.res.SessionID), Index: index, Text: text})
	})
}
