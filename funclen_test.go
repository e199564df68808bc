package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a product function may be (the house style): a longer one does more
// than one thing and is split into its steps.
const maxFuncLines = 80

// longFuncAllowed are the product functions allowed over maxFuncLines, each with why. Keep it
// to tables that read as data, not logic.
var longFuncAllowed = map[string]string{
	"ui.DefaultStyles": "the style table: one lipgloss style per line, data rather than logic",
}

// TestFunctionLength fails on any non-test function (or method) of the module over
// maxFuncLines lines, its signature and closing brace included, except longFuncAllowed.
func TestFunctionLength(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := funcName(f.Name.Name, fn)
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if _, ok := longFuncAllowed[name]; ok {
				seen[name] = true
				continue
			}
			if n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it into its steps", fset.Position(fn.Pos()), name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range longFuncAllowed {
		if !seen[name] {
			t.Errorf("longFuncAllowed names %s, which is gone: remove it from the list", name)
		}
	}
}

// funcName is pkg.Func or pkg.(*Type).Method / pkg.Type.Method.
func funcName(pkg string, fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return pkg + "." + fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	star := ""
	if s, ok := typ.(*ast.StarExpr); ok {
		typ, star = s.X, "*"
	}
	switch ix := typ.(type) { // a generic receiver: T[P] or T[P, Q]
	case *ast.IndexExpr:
		typ = ix.X
	case *ast.IndexListExpr:
		typ = ix.X
	}
	recv := "?"
	if id, ok := typ.(*ast.Ident); ok {
		recv = id.Name
	}
	if star != "" {
		return pkg + ".(*" + recv + ")." + fn.Name.Name
	}
	return pkg + "." + recv + "." + fn.Name.Name
}
