package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// packageStateAllowed are the package variables that hold a value computed once, lazily, that
// never changes after: each with its reason.
var packageStateAllowed = map[string]string{
	"workload.tokenizerLoaded": "the offline tokenizer's tables are built once on first use (tens of ms); this says they are, without waiting",
}

// TestNoPackageState keeps tokscope free of package-level mutable state (docs/architecture.md,
// "Development"): a package-level variable is a table or an instant fixed when the program
// starts, never a switch a test flips or a value a run changes. It fails on a package-level
// variable of a sync or sync/atomic type, and on one that any function of its package but init
// (tests included) assigns or increments; packageStateAllowed names the exceptions. What a test needs to change belongs
// to an instance (a field of the Client, the Runner, the options).
func TestNoPackageState(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	found := 0
	err := filepath.WalkDir(".", func(dir string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if dir != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(fset, dir, nil, 0)
		if err != nil {
			return err
		}
		for _, pkg := range pkgs {
			for _, f := range mutableGlobals(fset, pkg) {
				if _, ok := packageStateAllowed[pkg.Name+"."+f.name]; ok {
					continue
				}
				t.Errorf("%s", f.why)
				found++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found > 0 {
		t.Logf("%d package variables hold state: make each a field of what uses it", found)
	}
}

// finding is a package variable that holds state, and why it is taken to.
type finding struct{ name, why string }

// mutableGlobals lists the product's package-level variables of pkg (not its _test.go files')
// that are of a sync type or written by a function other than init, its tests' included.
func mutableGlobals(fset *token.FileSet, pkg *ast.Package) []finding {
	vars := map[string]token.Pos{}
	top := map[*ast.ValueSpec]bool{} // the package-level declarations
	var out []finding
	for name, file := range pkg.Files {
		if strings.HasSuffix(name, "_test.go") { // a test's own scaffolding (the binary built once)
			continue
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				top[vs] = true
				for _, n := range vs.Names {
					if n.Name == "_" {
						continue
					}
					vars[n.Name] = n.Pos()
					if syncType(vs.Type) {
						out = append(out, finding{n.Name, fset.Position(n.Pos()).String() + ": package variable " + n.Name + " is of a sync type"})
					}
				}
			}
		}
	}
	written := map[string]token.Pos{}
	for _, file := range pkg.Files {
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Recv == nil && fd.Name.Name == "init" { // init completes tables
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				var targets []ast.Expr
				switch n := n.(type) {
				case *ast.AssignStmt:
					targets = n.Lhs
				case *ast.IncDecStmt:
					targets = []ast.Expr{n.X}
				}
				for _, e := range targets {
					if id := rootIdent(e); id != nil && packageLevel(id, top) {
						if _, ok := vars[id.Name]; ok {
							if _, seen := written[id.Name]; !seen {
								written[id.Name] = id.Pos()
							}
						}
					}
				}
				return true
			})
		}
	}
	for name, at := range written {
		out = append(out, finding{name, fset.Position(vars[name]).String() + ": package variable " + name + " is written at " + fset.Position(at).String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].why < out[j].why })
	return out
}

// packageLevel reports whether id names a package-level variable: declared at the top of its
// file, or not resolved in its file at all (so declared in another file of the package; a
// local or a parameter always resolves).
func packageLevel(id *ast.Ident, top map[*ast.ValueSpec]bool) bool {
	if id.Obj == nil {
		return true
	}
	vs, ok := id.Obj.Decl.(*ast.ValueSpec)
	return ok && top[vs]
}

// rootIdent is the variable an assignment target writes: x in x, x.f, x[i], *x.
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch v := e.(type) {
		case *ast.Ident:
			return v
		case *ast.SelectorExpr:
			e = v.X
		case *ast.IndexExpr:
			e = v.X
		case *ast.StarExpr:
			e = v.X
		case *ast.ParenExpr:
			e = v.X
		default:
			return nil
		}
	}
}

// syncType reports a sync.X or atomic.X type expression (a Once, a Mutex, an atomic counter).
func syncType(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "sync" || pkg.Name == "atomic")
}
