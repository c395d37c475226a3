package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoInit: no init function outside tests. What a package needs at
// start is a variable built by an expression (Go orders package variables
// by their dependencies), so reading the declaration tells the whole story.
func TestNoInit(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	goFiles(t, root, func(path string, test bool) {
		if test {
			return
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: func init() outside tests; build the value in a variable's initializer", rel, fset.Position(fn.Pos()).Line)
			}
		}
	})
}

// hookMethods are the methods that change a value in place (atomics,
// sync.Once-free setters): a test calling one on a package variable
// changes that variable for every test and server in the process.
var hookMethods = []string{"Store", "Swap", "CompareAndSwap", "Add", "Set", "set"}

// TestNoTestHookVariables: no test changes a package-level variable
// declared in non-test code (assigns it, increments it, takes its address
// or calls a mutating method on it). Such a variable is a test hook that
// every test in the binary shares; the seam belongs in an option (a
// Config field, unexported if only the package's tests set it) or in a
// test-only file.
func TestNoTestHookVariables(t *testing.T) {
	root := moduleRoot(t)
	dirs := map[string]bool{}
	goFiles(t, root, func(p string, test bool) { dirs[filepath.Dir(p)] = true })
	for dir := range dirs {
		checkHooks(t, root, dir)
	}
}

func checkHooks(t *testing.T, root, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var pkgName string
	vars := map[string]bool{}
	var tests []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(n, "_test.go") {
			tests = append(tests, f)
			continue
		}
		pkgName = f.Name.Name
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, id := range s.(*ast.ValueSpec).Names {
						if id.Name != "_" {
							vars[id.Name] = true
						}
					}
				}
			}
		}
	}
	if len(vars) == 0 {
		return
	}
	for _, f := range tests {
		internal := f.Name.Name == pkgName
		// pkgVar reports the package variable e names: an unresolved
		// identifier in the package's own tests (a local one resolves), or
		// pkg.Name in its external tests.
		pkgVar := func(e ast.Expr) (string, bool) {
			for {
				switch x := e.(type) {
				case *ast.Ident:
					return x.Name, internal && x.Obj == nil && vars[x.Name]
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && !internal && id.Name == pkgName && id.Obj == nil {
						return x.Sel.Name, vars[x.Sel.Name]
					}
					e = x.X
				case *ast.IndexExpr:
					e = x.X
				case *ast.ParenExpr:
					e = x.X
				case *ast.StarExpr:
					e = x.X
				default:
					return "", false
				}
			}
		}
		report := func(n ast.Node, name, how string) {
			rel, _ := filepath.Rel(root, fset.Position(n.Pos()).Filename)
			t.Errorf("%s:%d %s package variable %s: a test hook shared by every test", rel, fset.Position(n.Pos()).Line, how, name)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				if x.Tok == token.DEFINE {
					return true
				}
				for _, l := range x.Lhs {
					if name, ok := pkgVar(l); ok {
						report(x, name, "assigns")
					}
				}
			case *ast.IncDecStmt:
				if name, ok := pkgVar(x.X); ok {
					report(x, name, "changes")
				}
			case *ast.UnaryExpr:
				if name, ok := pkgVar(x.X); ok && x.Op == token.AND {
					report(x, name, "takes the address of")
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && slices.Contains(hookMethods, sel.Sel.Name) {
					if name, ok := pkgVar(sel.X); ok {
						report(x, name, "calls "+sel.Sel.Name+" on")
					}
				}
			}
			return true
		})
	}
}

// knownDead are packages nothing imports that stay for now, each with the
// reason; the test fails when one is imported again, so the list cannot go
// stale.
var knownDead = map[string]string{}

// TestNoDeadPackages: every package of the module is a command, test-only
// (its non-test files declare nothing, e.g. a doc.go beside the tests),
// imported by another package's non-test code, or a test helper: imported
// by other packages' tests and saying so by its path (under an internal/
// directory, or named *test like store/storetest). Anything else is code
// nothing runs.
func TestNoDeadPackages(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{.Name}}|{{.Dir}}|{{join .GoFiles ","}}|{{join .Imports ","}}|{{join .TestImports ","}}|{{join .XTestImports ","}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		path, name, dir string
		files           []string
	}
	var pkgs []pkg
	var module string
	imported := map[string]bool{}     // by another package's non-test files
	testImported := map[string]bool{} // by another package's tests
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 7 {
			t.Fatalf("go list line %q", line)
		}
		p := pkg{path: f[0], name: f[1], dir: f[2], files: split(f[3])}
		if p.dir == root {
			module = p.path
		}
		pkgs = append(pkgs, p)
		for _, imp := range split(f[4]) {
			if imp != p.path {
				imported[imp] = true
			}
		}
		for _, imp := range append(split(f[5]), split(f[6])...) {
			if imp != p.path {
				testImported[imp] = true
			}
		}
	}
	if module == "" {
		module = "github.com/jetwal/jetwal"
	}
	fset := token.NewFileSet()
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.path, module), "/")
		if p.name == "main" || imported[p.path] || declaresNothing(t, fset, p.dir, p.files) {
			if _, ok := knownDead[rel]; ok && imported[p.path] {
				t.Errorf("%s is imported now: take it off knownDead", rel)
			}
			continue
		}
		helperPath := strings.HasSuffix(path.Base(rel), "test") || slices.Contains(strings.Split(rel, "/"), "internal")
		if testImported[p.path] && helperPath {
			continue
		}
		if why, ok := knownDead[rel]; ok {
			t.Logf("%s: imported by nothing outside its own tests; kept as a known exception (%s)", rel, why)
			continue
		}
		if testImported[p.path] {
			t.Errorf("%s is imported only by tests: move it under internal/ or name it *test if it is a test helper, else use or delete it", rel)
		} else {
			t.Errorf("%s is imported by nothing outside its own tests: use it or delete it", rel)
		}
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// declaresNothing reports whether the files hold no declaration but
// imports: a package that exists for its tests.
func declaresNothing(t *testing.T, fset *token.FileSet, dir string, files []string) bool {
	t.Helper()
	for _, n := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); !ok || g.Tok != token.IMPORT {
				return false
			}
		}
	}
	return true
}
