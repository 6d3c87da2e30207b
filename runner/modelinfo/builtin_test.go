package modelinfo

import (
	"fmt"
	"go/format"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestBuiltinTableIsModelsJSON checks that builtin_table.go holds exactly
// what models.json says, as Load would read it (normalised and checked):
// the file is the table's source, the Go file what a start uses without
// decoding it. UPDATE_GOLDEN=1 rewrites builtin_table.go from models.json.
func TestBuiltinTableIsModelsJSON(t *testing.T) {
	data, err := os.ReadFile("models.json")
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{byName: map[string]int{}}
	if err := want.merge("models.json", data); err != nil {
		t.Fatal(err)
	}
	src, err := builtinSource(want)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("builtin_table.go")
	if err != nil || string(have) != string(src) {
		if os.Getenv("UPDATE_GOLDEN") == "1" {
			if err := os.WriteFile("builtin_table.go", src, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("builtin_table.go is not models.json's table; run UPDATE_GOLDEN=1 go test ./runner/modelinfo (%v)", err)
	}
	got := Default()
	if got.Updated != want.Updated || !reflect.DeepEqual(got.models, want.models) || !reflect.DeepEqual(got.byName, want.byName) {
		t.Errorf("Default() is not models.json's table:\n got %+v\nwant %+v", got, want)
	}
}

// builtinSource is the Go source of builtin_table.go for table t.
func builtinSource(t *Table) ([]byte, error) {
	var b strings.Builder
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	price := func(p Price) string {
		return fmt.Sprintf("Price{Input: %s, Output: %s, CacheRead: %s, CacheWrite: %s}", num(p.Input), num(p.Output), num(p.CacheRead), num(p.CacheWrite))
	}
	b.WriteString("// Code generated from models.json by TestBuiltinTableIsModelsJSON; DO NOT EDIT.\n\npackage modelinfo\n\n")
	fmt.Fprintf(&b, "const builtinUpdated = %q\n\nvar builtinModels = []Model{\n", t.Updated)
	for _, m := range t.models {
		fmt.Fprintf(&b, "{Provider: %q, Name: %q, ", m.Provider, m.Name)
		if len(m.Aliases) > 0 {
			b.WriteString("Aliases: []string{")
			for _, a := range m.Aliases {
				fmt.Fprintf(&b, "%q, ", a)
			}
			b.WriteString("}, ")
		}
		fmt.Fprintf(&b, "Price: %s, ", price(m.Price))
		if m.LongContext != nil {
			fmt.Fprintf(&b, "LongContext: &Tier{Above: %d, Price: %s}, ", m.LongContext.Above, price(m.LongContext.Price))
		}
		if m.Flex != nil {
			fmt.Fprintf(&b, "Flex: &%s, ", price(*m.Flex))
		}
		if m.Priority != nil {
			fmt.Fprintf(&b, "Priority: &%s, ", price(*m.Priority))
		}
		if m.ContextWindow != 0 {
			fmt.Fprintf(&b, "ContextWindow: %d, ", m.ContextWindow)
		}
		if m.MaxOutput != 0 {
			fmt.Fprintf(&b, "MaxOutput: %d, ", m.MaxOutput)
		}
		if m.Thinking != "" {
			fmt.Fprintf(&b, "Thinking: %q, ", m.Thinking)
		}
		if m.Images {
			b.WriteString("Images: true, ")
		}
		if m.Source != "" {
			fmt.Fprintf(&b, "Source: %q", m.Source)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}
