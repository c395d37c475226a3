package vfs

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSyncAllOS(t *testing.T) {
	dir := t.TempDir()
	var files []File
	for _, n := range []string{"a", "b", "c"} {
		f, err := Default.Create(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte(n), 0); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := SyncAll(Default, files, []string{dir}); err != nil {
		t.Fatalf("SyncAll: %v", err)
	}
	// Every failure is reported, not only the first.
	missing := filepath.Join(dir, "missing")
	closed, err := Default.Create(filepath.Join(dir, "closed"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	err = SyncAll(Default, append(files, closed), []string{missing})
	if err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("SyncAll with a closed file and a missing dir: %v", err)
	}
}

func TestSyncAllInOrderStopsAtFirstError(t *testing.T) {
	mem := NewMemFS()
	efs := NewErrorFS(mem)
	if err := efs.MkdirAll("/d", 0o750); err != nil {
		t.Fatal(err)
	}
	var files []File
	for _, n := range []string{"/d/a", "/d/b"} {
		f, err := efs.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	efs.Inject(Fault{Op: OpSync, Path: "/d/a"})
	efs.Inject(Fault{Op: OpSync, Path: "/d/b"})
	efs.Inject(Fault{Op: OpSyncDir})
	if err := SyncAll(efs, files, []string{"/d"}); err == nil {
		t.Fatal("SyncAll succeeded despite a failing sync")
	}
	if n := efs.Injected(); n != 1 {
		t.Fatalf("%d faults fired, want 1: a failed sync must stop the in-order syncs", n)
	}
}
