package diskgrep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "secret-name"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "f"), []byte("xx secret yy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "g"), []byte("nothing here"), 0o644); err != nil {
		t.Fatal(err)
	}
	hits := Find(t, dir, "secret", "absent")
	if len(hits) != 1 || !strings.Contains(hits[0], filepath.Join("a", "f")+` holds "secret"`) {
		t.Fatalf("hits %q", hits)
	}
}
