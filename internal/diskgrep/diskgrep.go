// Package diskgrep is the search every encryption test makes: which files
// under a directory hold a given word in the clear. A test of an encrypted
// store asserts it finds nothing, and runs a plain control that must find
// the words, so that an empty result means encrypted, not "looked in the
// wrong place".
package diskgrep

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Find returns one line per file under dir and word it holds ("path holds
// \"word\""); file names are not searched, only contents.
func Find(t testing.TB, dir string, words ...string) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, w := range words {
			if bytes.Contains(b, []byte(w)) {
				hits = append(hits, fmt.Sprintf("%s holds %q", path, w))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}
