// Package testbin locates the external binaries tests drive: the pinned
// nats CLI that `make tools` installs into .bin/ at the module root.
package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// NatsCLI returns the path of the pinned nats CLI: $JETWAL_NATS_CLI, or
// .bin/nats at the module root. It fails the test (never skips) when the
// binary is missing, since `make test` installs it.
func NatsCLI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("JETWAL_NATS_CLI"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("JETWAL_NATS_CLI=%s: %v (run make tools)", p, err)
		}
		return p
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".bin", "nats")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("nats CLI not found at %s: run make tools", p)
	}
	return p
}

// ModuleRoot is the nearest directory above the working directory that
// holds a go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
