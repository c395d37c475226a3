package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaimDefaultStore: the default store root is created 0700, and a
// symlink planted at its name is refused.
func TestClaimDefaultStore(t *testing.T) {
	root := filepath.Join(t.TempDir(), "jetwal")
	if err := claimDefaultStore(root); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("created with mode %v, want 0700", fi.Mode().Perm())
	}
	if err := claimDefaultStore(root); err != nil {
		t.Fatalf("own existing directory refused: %v", err)
	}
	planted := filepath.Join(t.TempDir(), "jetwal")
	if err := os.Symlink(t.TempDir(), planted); err != nil {
		t.Fatal(err)
	}
	if err := claimDefaultStore(planted); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlinked default store: %v, want a refusal", err)
	}
	if os.Getuid() == 0 {
		other := filepath.Join(t.TempDir(), "jetwal")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if err := claimDefaultStore(other); err == nil || !strings.Contains(err.Error(), "uid 12345") {
			t.Fatalf("default store of another user: %v, want a refusal", err)
		}
	}
}
