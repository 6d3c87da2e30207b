package modelctx

import (
	"strings"

	"github.com/awlrun/awl/conv"
)

// FeedbackText is a gate's feedback as the user message the model gets:
// one text block wrapped in <gate_feedback gate="GATE">, so that a resumed
// session shows the model what it was told and a replay tells it from a
// real prompt.
func FeedbackText(gate, feedback string) string {
	return `<gate_feedback gate="` + gate + `">` + "\n" + strings.TrimSpace(feedback) + "\n</gate_feedback>"
}

// IsGateFeedback reports whether m is a gate's feedback rather than a
// prompt: a user message of one text block that FeedbackText made.
func IsGateFeedback(m conv.Message) bool {
	if m.Role != conv.RoleUser || len(m.Content) != 1 || m.Content[0].Type != conv.BlockText {
		return false
	}
	t := m.Content[0].Text
	return strings.HasPrefix(t, `<gate_feedback gate="`) && strings.HasSuffix(t, "</gate_feedback>")
}
