package runner

import (
	"fmt"
	"strings"

	"github.com/awlrun/awl/conv"
	"github.com/awlrun/awl/provider"
	"github.com/awlrun/awl/runner/tool"
)

// A tool's input schema goes to the model lowered to what every API takes
// (provider.LowerToolSchema); the arguments the model sends back are then
// checked against the tool's own schema before the call, so that what the
// lowering loosened (a root union's constraint, said only in words) still
// holds. A schema that cannot be lowered leaves its tool out of the run,
// with a warning.

// offerable splits tools into those whose input schema can be offered and
// a warning for each of the others.
func offerable(tools []tool.Tool) (kept []tool.Tool, warnings []string) {
	kept = tools[:0:0]
	for _, t := range tools {
		if _, _, err := provider.LowerToolSchema(t.Schema()); err != nil {
			warnings = append(warnings, fmt.Sprintf("tool %s is not offered: %v", t.Name(), err))
			continue
		}
		kept = append(kept, t)
	}
	return kept, warnings
}

// argChecker holds, per tool whose schema was lowered, its own schema
// compiled, on the first call.
type argChecker map[string]*OutputSchema

// check returns a tool result error for a call whose arguments do not
// match t's own schema, or nil. Tools whose schema went out unchanged are
// not checked here: the API held the model to it, and the tool checks its
// arguments itself.
func (c argChecker) check(t tool.Tool, u conv.Block) *conv.Block {
	sch, seen := c[t.Name()]
	if !seen {
		if _, changed, err := provider.LowerToolSchema(t.Schema()); err == nil && changed {
			sch, _ = CompileOutputSchema(t.Schema()) // a schema that does not compile is not checked
		}
		c[t.Name()] = sch
	}
	if sch == nil {
		return nil
	}
	in := u.Input
	if strings.TrimSpace(in) == "" {
		in = "{}"
	}
	if _, problems := sch.Validate(in); len(problems) > 0 {
		return &conv.Block{Type: conv.BlockToolResult, ToolUseID: u.ID, IsError: true,
			Content: fmt.Sprintf("the arguments do not match the input schema of %s; it was not called: %s", t.Name(), strings.Join(problems, "; "))}
	}
	return nil
}
