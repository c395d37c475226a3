package lint

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fileMapItem is one line of a file map: a list item that names a file of
// the package, "  - name.go: what it holds".
var fileMapItem = regexp.MustCompile(`^  - ([A-Za-z0-9_]+\.go):`)

// TestDocFileMaps: a package whose doc.go has a "# Source files" heading lists
// there every non-test .go file of the package, one list item each
// ("  - name.go: description"), and names no file that does not exist. The
// section runs from the heading to the next heading or the end of the
// package comment.
func TestDocFileMaps(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	maps := 0
	goFiles(t, root, func(path string, test bool) {
		if test || filepath.Base(path) != "doc.go" {
			return
		}
		f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc == nil {
			return
		}
		named, ok := fileMap(f.Doc.Text())
		if !ok {
			return
		}
		maps++
		dir := filepath.Dir(path)
		rel, _ := filepath.Rel(root, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, e := range entries {
			n := e.Name()
			if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				have = append(have, n)
			}
		}
		for _, n := range have {
			if !slices.Contains(named, n) {
				t.Errorf("%s/doc.go: the file map (# Source files) does not name %s", rel, n)
			}
		}
		for i, n := range named {
			if !slices.Contains(have, n) {
				t.Errorf("%s/doc.go: the file map names %s, which is not a file of the package", rel, n)
			}
			if slices.Contains(named[:i], n) {
				t.Errorf("%s/doc.go: the file map names %s twice", rel, n)
			}
		}
	})
	if maps == 0 {
		t.Fatal("no doc.go with a # Source files heading found: the rule checks nothing")
	}
}

// fileMap returns the files named by the list items of the "# Source files"
// section of a package comment (as go/ast's CommentGroup.Text gives it),
// and whether there is one.
func fileMap(doc string) ([]string, bool) {
	var named []string
	in, found := false, false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "# ") {
			in = line == "# Source files"
			found = found || in
			continue
		}
		if m := fileMapItem.FindStringSubmatch(line); in && m != nil {
			named = append(named, m[1])
		}
	}
	return named, found
}
