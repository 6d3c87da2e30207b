package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, from its func line to its
// closing brace, in any package of the module (its tests aside). A longer
// one is split into named steps.
const maxFuncLines = 100

// TestNoLongFunctions walks the non-test sources of every package of the
// module and fails on each function (or method) over maxFuncLines, naming
// it. It also fails if it finds fewer files than the module surely has,
// so that a walk gone wrong cannot pass by reading nothing.
func TestNoLongFunctions(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	dirs := map[string]bool{}
	for _, p := range moduleGoFiles(t, root) {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files++
		rel, _ := filepath.Rel(root, p)
		dirs[filepath.Dir(rel)] = true
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			from, to := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := to.Line - from.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines; the most is %d: split it into named steps", rel, from.Line, funcName(fd), n, maxFuncLines)
			}
		}
	}
	for _, want := range []string{"cmd/awl", "runner", "runner/mcp", "session", "provider", "internal/jsonschema", "trace", "scripts/benchfloor"} {
		if !dirs[filepath.FromSlash(want)] {
			t.Errorf("no Go file of %s was read", want)
		}
	}
	if files < 100 {
		t.Errorf("read %d Go files; the module has more", files)
	}
}

// funcName is fd's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}
