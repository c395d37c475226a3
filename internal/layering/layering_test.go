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
	"server/auth": {"server", "config", "monitor", "jetstream", "sysreq", "serve", "cmd/jetwal"},
	"server":      {"config", "monitor", "jetstream", "sysreq", "serve", "cmd/jetwal"},
	"config":      {"server", "monitor", "jetstream", "sysreq", "serve", "cmd/jetwal"},
	"monitor":     {"config", "sysreq", "serve", "cmd/jetwal"},
	"jetstream":   {"config", "monitor", "server/auth", "sysreq", "serve", "cmd/jetwal"},
	"sysreq":      {"config", "jetstream", "serve", "cmd/jetwal"},
	"cluster":     {"config", "monitor", "jetstream", "sysreq", "serve", "cmd/jetwal"},
	// serve assembles the server; only the command is above it.
	"serve": {"cmd/jetwal"},
	// internal/verify prints the offline checks of the packages that own
	// the store formats, for `jetwal verify`.
	"internal/verify": {"server", "config", "monitor", "sysreq", "cluster", "serve", "cmd/jetwal"},
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
	// jetstream/apiserver holds the API handlers: they decode a request,
	// call one operation of apiserver.Ops (which jetstream implements)
	// and encode the reply, so they never import jetstream itself.
	"jetstream/apiserver": {"jetstream/api", "jetstream/validate", "natshdr"},
	// jetstream/internal holds the self-contained pieces of jetstream.
	"jetstream/internal/cron":    {},
	"jetstream/internal/archive": {"jetstream/api", "store"},
	"jetstream/internal/queue":   {},
	"jetstream/internal/dedupe":  {},
	"natshdr":                    {},
	// server/websocket is the WebSocket transport under server's client
	// listener: standard library only.
	"server/websocket": {},
	// crypt sits beside vfs at the bottom: only the seam and the error sentinel.
	"crypt": {"vfs", "store"},
	// internal/benchtool finds and runs the bench harness for `jetwal
	// bench compare`: standard library only.
	"internal/benchtool": {},
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

// apart lists pairs of package trees (a package and everything under it)
// that never import each other in non-test code. cluster and jetstream
// meet only in serve, which adapts a cluster.Node to the Cluster and
// Replica interfaces jetstream defines (ARCHITECTURE.md, "Cluster").
var apart = [][2]string{
	{"cluster", "jetstream"},
}

func TestApart(t *testing.T) {
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range apart {
		for i, tree := range pair {
			other := pair[1-i]
			checked := 0
			err := filepath.WalkDir(filepath.Join(root, tree), func(p string, d os.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return err
				}
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				rel, _ := filepath.Rel(root, p)
				for _, imp := range importsOf(t, p) {
					r, ok := strings.CutPrefix(imp, module)
					if ok && (r == other || strings.HasPrefix(r, other+"/")) {
						t.Errorf("%s imports %s: %s and %s stay apart", filepath.ToSlash(rel), imp, tree, other)
					}
				}
				checked++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if checked == 0 {
				t.Errorf("no package under %s: the rule checks nothing", tree)
			}
		}
	}
}
