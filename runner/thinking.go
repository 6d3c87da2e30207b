package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/event"
	"github.com/awlrun/awl/runner/modelinfo"
	"github.com/awlrun/awl/session"
)

// TypeThinkingForm is the entry type that records the thinking form a
// server asked for when it refused another: a model the table does not
// know that refused a token budget takes adaptive thinking.
const TypeThinkingForm = "thinkingForm"

// thinkingFormFields are the members of a thinkingForm entry.
type thinkingFormFields struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Form     string `json:"form"`
}

// thinkingForm is how the run's model takes --reasoning: the model
// table's form, else the form a thinkingForm entry on the session's path
// records for the model, else "" (each API's older form).
func (r *run) thinkingForm() string {
	if r.thinkingSeeded {
		return r.thinking
	}
	r.thinkingSeeded = true
	name := r.cfg.Provider.Name()
	if m, ok := r.cfg.Prices.Lookup(name, r.cfg.Model); ok && m.Thinking != "" {
		r.thinking = m.Thinking
		return r.thinking
	}
	if r.sess != nil {
		r.thinking = learnedThinking(r.sess.ActivePath(), name, r.cfg.Model, r.cfg.Prices)
	}
	return r.thinking
}

// learnedThinking is the form the latest thinkingForm entry on path
// records for provider's model (or a name the model table takes for it),
// "" for none.
func learnedThinking(path []session.Entry, provider, model string, table *modelinfo.Table) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type != TypeThinkingForm {
			continue
		}
		var f thinkingFormFields
		if json.Unmarshal(path[i].Fields, &f) == nil && f.Form != "" && sameModel(table, f.Provider, f.Model, provider, model) {
			return f.Form
		}
	}
	return ""
}

// streamThinking sends req with the model's thinking form. A model the
// table does not know is sent a token budget, the form every model that
// reasons took until adaptive thinking; when the server refuses exactly
// that, the request goes once more in the adaptive form, which the run
// keeps, and the session records so that a resume sends it at once.
func (r *run) streamThinking(ctx context.Context, req provider.Request) (conv.Message, error) {
	req.Thinking = r.thinkingForm()
	msg, err := r.cfg.Provider.Stream(ctx, req, r.onProviderEvent)
	if err == nil || req.Reasoning == "" || req.Thinking != "" || !provider.RefusesBudgetThinking(err) {
		return msg, err
	}
	r.thinking = provider.ThinkingAdaptive
	f := thinkingFormFields{Provider: r.cfg.Provider.Name(), Model: r.cfg.Model, Form: r.thinking}
	if aerr := r.appendEntry(session.Entry{Type: TypeThinkingForm, Fields: mustJSON(f)}); aerr != nil {
		return conv.Message{}, aerr
	}
	text := r.cfg.Redact.String(err.Error()) + "; sending it again with adaptive thinking (thinking.type adaptive, output_config.effort " + req.Reasoning + ")"
	if r.deltas != nil {
		r.deltas.Drop()
	}
	em := r.cfg.Events
	em.Emit(event.Retry{Base: em.Stamp("retry", r.res.SessionID), Attempt: 1, Status: 400, Error: text})
	if r.cfg.Notes != nil {
		fmt.Fprintf(r.cfg.Notes, "awl: model %s refused thinking with a token budget; it takes adaptive thinking, for this run and the session from now on\n", r.cfg.Model)
	}
	req.Thinking = r.thinking
	return r.cfg.Provider.Stream(ctx, req, r.onProviderEvent)
}

// CheckModelFlags refuses, before anything is sent, what the model table
// says the model cannot take: --reasoning on a model that does not reason,
// and a --max-output-tokens (maxOutput, 0 for none) below the API's
// minimum or above the model's maximum. A model the table does not know
// is checked against the API's minimum alone.
func CheckModelFlags(table *modelinfo.Table, providerName, model, reasoning string, maxOutput int) error {
	m, known := table.Lookup(providerName, model)
	if reasoning != "" && known && m.Thinking == modelinfo.ThinkingNone {
		return Usagef(fmt.Sprintf("--reasoning: %s model %q does not reason (awl's model table; see awl models), so it takes no reasoning effort", providerName, model))
	}
	if maxOutput == 0 {
		return nil
	}
	if least := provider.MinOutputTokens(providerName); maxOutput < least {
		return Usagef(fmt.Sprintf("--max-output-tokens: %d is below %d, the least the %s API takes", maxOutput, least, providerName))
	}
	if known && m.MaxOutput > 0 && int64(maxOutput) > m.MaxOutput {
		return Usagef(fmt.Sprintf("--max-output-tokens: %d is more than %s model %q writes in one answer (%d, awl's model table)", maxOutput, providerName, model, m.MaxOutput))
	}
	return nil
}
