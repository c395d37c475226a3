package benchtool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHasFlag(t *testing.T) {
	args := []string{"-quick", "--jetwal=/x", "-out", "dir"}
	for name, want := range map[string]bool{"quick": true, "jetwal": true, "out": true, "nats-server": false} {
		if got := hasFlag(args, name); got != want {
			t.Errorf("hasFlag(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestFindBeside(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "jetwal")
	tool := filepath.Join(dir, "jetwal-bench")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := findBeside(self, "jetwal-bench", "make bench-tool"); err != nil || got != tool {
		t.Fatalf("findBeside = %q, %v; want %q", got, err, tool)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := findBeside(self, "no-such-tool", "make x"); err == nil || !strings.Contains(err.Error(), "make x") {
		t.Fatalf("missing tool: %v", err)
	}
}
