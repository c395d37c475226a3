// Package layering holds a test that keeps the package layers one-way.
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/internal/testbin"
)

const module = "github.com/jetwal/jetwal/"

// forbidden lists, for a package (by its path in the module), the module
// packages (exact paths) its non-test files must not import.
var forbidden = map[string][]string{
	"server/auth": {"server", "config", "monitor", "jetstream", "sysreq", "cmd/jetwal"},
	"server":      {"config", "monitor", "jetstream", "sysreq", "cmd/jetwal"},
	"config":      {"server", "monitor", "jetstream", "sysreq", "cmd/jetwal"},
	"monitor":     {"config", "sysreq", "cmd/jetwal"},
	"jetstream":   {"config", "monitor", "server/auth", "sysreq", "cmd/jetwal"},
	"sysreq":      {"config", "jetstream", "cmd/jetwal"},
}

// engine packages import none of the serving layers.
var engine = []string{"vfs", "crypt", "segment", "index", "wal", "consumerstate", "memstore", "store"}

func TestLayering(t *testing.T) {
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range engine {
		forbidden[e] = []string{"server", "server/auth", "server/sublist", "config", "monitor", "jetstream", "cmd/jetwal"}
	}
	for pkg, bad := range forbidden {
		imports := importsOf(t, filepath.Join(root, pkg))
		for _, imp := range imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			for _, b := range bad {
				if rel == b {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
		}
	}
}

// leaves may import, of the module's packages, only the ones listed.
var leaves = map[string][]string{
	"jetstream/validate": {"jetstream/api", "subject", "subject/transform"},
	"jetstream/api":      {},
	"natshdr":            {},
	// crypt sits beside vfs at the bottom: only the seam and the error sentinel.
	"crypt": {"vfs", "store"},
}

func TestLeaves(t *testing.T) {
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for pkg, allowed := range leaves {
		for _, imp := range importsOf(t, filepath.Join(root, pkg)) {
			rel, ok := strings.CutPrefix(imp, module)
			if ok && !slices.Contains(allowed, rel) {
				t.Errorf("%s is a leaf but imports %s", pkg, imp)
			}
		}
	}
}

// importsOf returns the imports of the non-test Go files directly in dir.
func importsOf(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out = append(out, p)
		}
	}
	return out
}
