package modelctx

import "github.com/awlrun/awl/conv"

// budgetNotice is the wrap-up notice a run appends once, as a contextual
// user message, when its remaining budget falls below one more turn's worth.
// It is not gathered context: build never emits it, and it is registered
// only so that IsContextual tells it from real user intent.
type budgetNotice struct{ text string }

func (budgetNotice) role() conv.Role { return conv.RoleUser }

func (budgetNotice) markers() (open, close string) { return "<budget_notice>", "</budget_notice>" }

func (n budgetNotice) render() string {
	return "<budget_notice>\n" + n.text + "\n</budget_notice>"
}

func (budgetNotice) build(State, *Baseline) []fragment { return nil }

// BudgetNotice renders the wrap-up notice that says text.
func BudgetNotice(text string) string { return budgetNotice{text: text}.render() }
