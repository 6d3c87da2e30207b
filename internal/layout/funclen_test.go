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
// closing brace, in the packages that hold the program's sequence: setup
// (cmd/awl), the state machine (the runner root) and the session log. A
// longer one is split into named steps.
const maxFuncLines = 100

// shortFuncDirs are those packages' directories, from the module root.
var shortFuncDirs = []string{"cmd/awl", "runner", "session"}

// TestNoLongFunctions walks the non-test sources of shortFuncDirs and fails
// on each function (or method) over maxFuncLines, naming it.
func TestNoLongFunctions(t *testing.T) {
	for _, dir := range shortFuncDirs {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range af.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				from, to := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := to.Line - from.Line + 1; n > maxFuncLines {
					t.Errorf("%s/%s:%d: %s is %d lines; the most is %d: split it into named steps", dir, filepath.Base(f), from.Line, funcName(fd), n, maxFuncLines)
				}
			}
		}
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
