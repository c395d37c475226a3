// Package lint holds tests that keep the codebase's rules: rules that run
// as tests do not drift. (internal/layering keeps the import layers.)
package lint

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/internal/testbin"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goFiles walks the root module's Go files (not nested modules, not
// hidden or testdata directories) and calls fn for each.
func goFiles(t *testing.T, root string, fn func(path string, test bool)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module keeps its own rules
				}
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			fn(path, strings.HasSuffix(path, "_test.go"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoPanicInLibraryCode: library code returns errors; a panic( call
// outside tests is a crash waiting for an input.
func TestNoPanicInLibraryCode(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	goFiles(t, root, func(path string, test bool) {
		if test {
			return
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" && id.Obj == nil {
					t.Errorf("%s: panic( outside tests", fset.Position(call.Pos()))
				}
			}
			return true
		})
	})
}

// TestEngineImportsNoServingDependencies: the storage engine does not
// depend on raft, Prometheus, a config parser or the NATS server.
func TestEngineImportsNoServingDependencies(t *testing.T) {
	root := moduleRoot(t)
	engine := []string{"vfs", "segment", "index", "wal", "consumerstate", "memstore", "store", "subject", "raftlog", "durable", "natshdr"}
	banned := []string{"github.com/hashicorp/", "github.com/prometheus/", "github.com/nats-io/nats-server", "github.com/nats-io/nats.go"}
	fset := token.NewFileSet()
	for _, pkg := range engine {
		goFiles(t, filepath.Join(root, pkg), func(path string, test bool) {
			if test {
				return
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, b := range banned {
					if strings.HasPrefix(p, b) {
						t.Errorf("%s imports %s: the engine stays free of serving dependencies", path, p)
					}
				}
			}
		})
	}
}

// TestFuzzTargetsInMakefile: every Fuzz function of the root module is in
// the Makefile's FUZZ_TARGETS, so make test and make fuzz run it.
func TestFuzzTargetsInMakefile(t *testing.T) {
	root := moduleRoot(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)FUZZ_TARGETS :=(.*?)\n\n`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile has no FUZZ_TARGETS list")
	}
	listed := strings.Fields(strings.ReplaceAll(string(m[1]), "\\", " "))
	fuzzRE := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(\w+ \*testing\.F\)`)
	var missing []string
	goFiles(t, root, func(path string, test bool) {
		if !test {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, f := range fuzzRE.FindAllSubmatch(b, -1) {
			target := "./" + filepath.ToSlash(rel) + ":" + string(f[1])
			if !slices.Contains(listed, target) {
				missing = append(missing, target)
			}
		}
	})
	if len(missing) > 0 {
		t.Fatalf("fuzz targets missing from the Makefile's FUZZ_TARGETS: %v", missing)
	}
}

// TestNoMachinePaths: no tracked file holds an absolute path of a build
// machine (a checkout or home directory).
func TestNoMachinePaths(t *testing.T) {
	root := moduleRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	bad := regexp.MustCompile(`/work/|/root/|/home/[a-z]`)
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f == "" || f == "internal/lint/lint_test.go" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		if loc := bad.FindIndex(b); loc != nil {
			line := bytes.Count(b[:loc[0]], []byte("\n")) + 1
			t.Errorf("%s:%d holds a machine path", f, line)
		}
	}
}

// TestGoModTidy: go.mod and go.sum are what go mod tidy makes them (direct
// dependencies not marked indirect, nothing unused).
func TestGoModTidy(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command("go", "mod", "tidy", "-diff")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go mod tidy -diff: %v\n%s", err, out)
	}
}
