package modelctx

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/awlrun/awl/conv"
)

// TestFragmentTableMatchesRegistry keeps docs/context.md's fragment table
// true to the registry: one row per gathered fragment, in prompt order,
// each with its envelope; and the fragment numbers the "Switching a
// fragment off" section gives are those of the rows whose switch is
// --no-env-context and --no-agents-md.
func TestFragmentTableMatchesRegistry(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "context.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	row := regexp.MustCompile(`(?m)^\| ([0-9]+) \| ([^|]+) \| (system|user) \|.*\| ([^|]*) \|$`)
	// A cell may hold an escaped pipe (`FILE\|none`).
	rows := row.FindAllStringSubmatch(strings.ReplaceAll(text, `\|`, "/"), -1)
	var gathered []fragment
	for _, f := range registry() {
		if _, ok := f.(budgetNotice); !ok {
			gathered = append(gathered, f)
		}
	}
	if len(rows) != len(gathered) {
		t.Fatalf("docs/context.md's table has %d fragments, the registry gathers %d", len(rows), len(gathered))
	}
	switches := map[string][]int{}
	for i, r := range rows {
		if n, _ := strconv.Atoi(r[1]); n != i+1 {
			t.Errorf("row %d is numbered %s", i+1, r[1])
		}
		want := "system"
		if gathered[i].role() == conv.RoleUser {
			want = "user"
		}
		if r[3] != want {
			t.Errorf("fragment %d (%s) goes in the %s envelope, the table says %s", i+1, strings.TrimSpace(r[2]), want, r[3])
		}
		sw := strings.Trim(strings.TrimSpace(r[4]), "`")
		switches[sw] = append(switches[sw], i+1)
	}
	env, agents := switches["--no-env-context"], switches["--no-agents-md"]
	if len(env) != 1 || len(agents) != 2 || agents[1] != agents[0]+1 {
		t.Fatalf("switch columns: --no-env-context %v, --no-agents-md %v", env, agents)
	}
	want := "`--no-env-context` and `--no-agents-md` switch fragments " + strconv.Itoa(env[0]) + " and " + strconv.Itoa(agents[0]) + "–" + strconv.Itoa(agents[1]) + " off."
	if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
		t.Errorf("docs/context.md does not say %q", want)
	}
}
