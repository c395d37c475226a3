package main

import (
	"path/filepath"
	"regexp"
	"testing"
)

// A damaged consumer catalogue (obs/catalog.log) is reported with its file
// and offset.
func TestVerifyReportsDamagedCatalogue(t *testing.T) {
	root, stream := makeStore(t)
	flipByte(t, filepath.Join(stream, "obs", "catalog.log"), 9) // the header's generation
	code, out, _ := runCmd("verify", root)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	re := `DAMAGED .*obs/catalog\.log: offset 16: catalogue header checksum`
	if !regexp.MustCompile(re).MatchString(out) {
		t.Fatalf("no line matching %s in:\n%s", re, out)
	}
}
