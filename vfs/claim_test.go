package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestClaim: a claim keeps a second claim of the same name in the same FS
// out, however the name is spelled, until it is closed; another FS, or
// another name, is not kept out; and it creates nothing on disk.
func TestClaim(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "store")
	c, err := Claim(Default, name)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, again := range []string{name, name + "/", filepath.Join(name, "x", ".."), rel} {
		if _, err := Claim(Default, again); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Fatalf("second claim as %q: %v, want EWOULDBLOCK", again, err)
		}
	}
	other, err := Claim(Default, name+"2")
	if err != nil {
		t.Fatalf("claim of another name: %v", err)
	}
	other.Close()
	mem, err := Claim(NewMemFS(), name)
	if err != nil {
		t.Fatalf("claim of the same name in another FS: %v", err)
	}
	mem.Close()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("a claim left %v (%v) on disk", ents, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.Close() // twice is harmless, and does not drop a later claim
	c2, err := Claim(Default, name)
	if err != nil {
		t.Fatalf("claim after close: %v", err)
	}
	c.Close()
	if _, err := Claim(Default, name); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a stale Close dropped a later claim: %v", err)
	}
	c2.Close()
}
