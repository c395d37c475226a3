package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
)

// newDurableDir returns a MemFS in which /d exists durably.
func newDurableDir(t *testing.T) *MemFS {
	t.Helper()
	fs := NewMemFS()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return fs
}

func mustSyncDir(t *testing.T, fs FS, dir string) {
	t.Helper()
	if err := fs.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

// fileState returns a file's contents, or "<missing>".
func fileState(t *testing.T, fs FS, name string) string {
	t.Helper()
	f, err := fs.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return string(readAll(t, f))
}

func TestMemCrashLosesUnsyncedData(t *testing.T) {
	fs := newDurableDir(t)
	f := mustCreate(t, fs, "/d/a")
	mustSyncDir(t, fs, "/d")
	mustWrite(t, f, []byte("unsynced"))
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "" {
		t.Fatalf("before Sync: crash shows %q, want empty file", got)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("-tail"))
	if _, err := f.WriteAt([]byte("U"), 0); err != nil {
		t.Fatal(err)
	}
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "unsynced" {
		t.Fatalf("after Sync: crash shows %q, want %q", got, "unsynced")
	}
	// The original is untouched by cloning.
	if got := fileState(t, fs, "/d/a"); got != "Unsynced-tail" {
		t.Fatalf("original = %q", got)
	}
}

func TestMemCrashUnsyncedTruncate(t *testing.T) {
	fs := newDurableDir(t)
	writeFile(t, fs, "/d/a", "abcdef")
	mustSyncDir(t, fs, "/d")
	f, err := fs.OpenRW("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "abcdef" {
		t.Fatalf("unsynced truncate: crash shows %q", got)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "ab" {
		t.Fatalf("synced truncate: crash shows %q", got)
	}
}

func TestMemCrashUnsyncedCreateLost(t *testing.T) {
	fs := newDurableDir(t)
	writeFile(t, fs, "/d/a", "data") // file synced, directory not
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "<missing>" {
		t.Fatalf("create without SyncDir survived: %q", got)
	}
	mustSyncDir(t, fs, "/d")
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "data" {
		t.Fatalf("create with SyncDir: %q", got)
	}
}

func TestMemCrashMkdirNeedsParentSync(t *testing.T) {
	fs := NewMemFS()
	if err := fs.MkdirAll("/a/b", 0o755); err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, fs, "/a") // syncing the new dir itself is not enough
	if _, err := fs.CrashClone().Stat("/a"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unsynced mkdir survived: %v", err)
	}
	mustSyncDir(t, fs, "/")
	c := fs.CrashClone()
	if fi, err := c.Stat("/a/b"); err != nil || !fi.IsDir {
		t.Fatalf("synced mkdir: %+v, %v", fi, err)
	}
}

func TestMemCrashRemoveNeedsSyncDir(t *testing.T) {
	fs := newDurableDir(t)
	writeFile(t, fs, "/d/a", "keep")
	mustSyncDir(t, fs, "/d")
	if err := fs.Remove("/d/a"); err != nil {
		t.Fatal(err)
	}
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "keep" {
		t.Fatalf("unsynced remove: crash shows %q", got)
	}
	mustSyncDir(t, fs, "/d")
	if got := fileState(t, fs.CrashClone(), "/d/a"); got != "<missing>" {
		t.Fatalf("synced remove: crash shows %q", got)
	}
}

// TestMemCrashRenameAtomic checks the write-temp-then-rename pattern: a
// crash shows either the whole old state or the whole new state.
func TestMemCrashRenameAtomic(t *testing.T) {
	fs := newDurableDir(t)
	writeFile(t, fs, "/d/meta", "v1")
	mustSyncDir(t, fs, "/d")

	writeFile(t, fs, "/d/meta.tmp", "v2")
	if err := fs.Rename("/d/meta.tmp", "/d/meta"); err != nil {
		t.Fatal(err)
	}
	c := fs.CrashClone()
	if got := fileState(t, c, "/d/meta"); got != "v1" {
		t.Fatalf("before SyncDir: meta = %q, want v1", got)
	}
	if got := fileState(t, c, "/d/meta.tmp"); got != "<missing>" {
		t.Fatalf("before SyncDir: meta.tmp = %q (its create was never synced)", got)
	}

	mustSyncDir(t, fs, "/d")
	c = fs.CrashClone()
	if got := fileState(t, c, "/d/meta"); got != "v2" {
		t.Fatalf("after SyncDir: meta = %q, want v2", got)
	}
	names, err := c.ReadDir("/d")
	if err != nil || !slices.Equal(names, []string{"meta"}) {
		t.Fatalf("after SyncDir: ReadDir = %q, %v", names, err)
	}
}

func TestMemCrashRenameAcrossDirs(t *testing.T) {
	fs := NewMemFS()
	for _, d := range []string{"/x", "/y"} {
		if err := fs.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSyncDir(t, fs, "/")
	writeFile(t, fs, "/x/f", "data")
	mustSyncDir(t, fs, "/x")
	if err := fs.Rename("/x/f", "/y/f"); err != nil {
		t.Fatal(err)
	}
	mustSyncDir(t, fs, "/y") // only the target directory is synced
	c := fs.CrashClone()
	if fileState(t, c, "/x/f") != "data" || fileState(t, c, "/y/f") != "data" {
		t.Fatal("half-synced rename should leave the file under both names")
	}
	// Both names lead to one inode in the clone, as on a real disk.
	f, err := c.OpenRW("/x/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("D"), 0); err != nil {
		t.Fatal(err)
	}
	if got := fileState(t, c, "/y/f"); got != "Data" {
		t.Fatalf("second name = %q, want the shared inode's %q", got, "Data")
	}
}

func TestMemCloneIsIndependent(t *testing.T) {
	fs := newDurableDir(t)
	writeFile(t, fs, "/d/a", "base")
	mustSyncDir(t, fs, "/d")
	lock, err := fs.Lock("/d/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	c := fs.CrashClone()
	writeFile(t, c, "/d/a", "clone")
	writeFile(t, fs, "/d/b", "orig")
	if got := fileState(t, fs, "/d/a"); got != "base" {
		t.Fatalf("clone write leaked into original: %q", got)
	}
	if got := fileState(t, c, "/d/b"); got != "<missing>" {
		t.Fatalf("original write leaked into clone: %q", got)
	}
	// Locks do not survive a crash.
	l, err := c.Lock("/d/LOCK")
	if err != nil {
		t.Fatalf("lock held across crash: %v", err)
	}
	mustClose(t, l)
}

func TestMemMapFollowsWritesAcrossGrowth(t *testing.T) {
	fs := NewMemFS()
	f := mustCreate(t, fs, "/a")
	defer f.Close()
	mustWrite(t, f, []byte("abcd"))
	m, err := f.Map(8)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unmap()
	if want := []byte{'a', 'b', 'c', 'd', 0, 0, 0, 0}; !bytes.Equal(m.Bytes(), want) {
		t.Fatalf("mapping = %q, want %q", m.Bytes(), want)
	}
	// Grow the file far past the mapping, moving its backing array, then
	// write inside the mapped range: the view must still follow.
	if _, err := f.WriteAt(make([]byte, 1<<16), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("XY"), 5); err != nil {
		t.Fatal(err)
	}
	if want := []byte{'a', 'b', 'c', 'd', 0, 'X', 'Y', 0}; !bytes.Equal(m.Bytes(), want) {
		t.Fatalf("mapping after growth = %q, want %q", m.Bytes(), want)
	}
	if err := f.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if want := []byte{'a', 'b', 0, 0, 0, 0, 0, 0}; !bytes.Equal(m.Bytes(), want) {
		t.Fatalf("mapping after truncate = %q, want %q", m.Bytes(), want)
	}
	if err := m.Unmap(); err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != nil {
		t.Fatal("Bytes after Unmap is not nil")
	}
}

func TestMemPathForms(t *testing.T) {
	fs := NewMemFS()
	if err := fs.MkdirAll("rel/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fs, "/rel/dir/../dir/./f", "x")
	if got := fileState(t, fs, "rel/dir/f"); got != "x" {
		t.Fatalf("relative path = %q", got)
	}
	if _, err := fs.Create(""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Create(\"\") = %v", err)
	}
	if _, err := fs.Open("/rel"); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
	if err := fs.Rename("/rel", "/rel/dir/inside"); err == nil {
		t.Fatal("renaming a directory into itself succeeded")
	}
}

func TestMemFileSizeLimit(t *testing.T) {
	fs := NewMemFS()
	f := mustCreate(t, fs, "/a")
	defer f.Close()
	if err := f.Truncate(MaxMemFileSize + 1); err == nil {
		t.Fatal("Truncate past MaxMemFileSize succeeded")
	}
	if _, err := f.WriteAt([]byte("x"), MaxMemFileSize); err == nil {
		t.Fatal("WriteAt past MaxMemFileSize succeeded")
	}
	if err := f.Allocate(MaxMemFileSize, 1); err == nil {
		t.Fatal("Allocate past MaxMemFileSize succeeded")
	}
}

func TestMemCrashCloneTorn(t *testing.T) {
	build := func() *MemFS {
		fs := newDurableDir(t)
		f := mustCreate(t, fs, "/d/a")
		mustSyncDir(t, fs, "/d")
		mustWrite(t, f, []byte("durable|"))
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, []byte("0123456789"))
		if _, err := f.WriteAt([]byte("D"), 0); err != nil { // unsynced overwrite
			t.Fatal(err)
		}
		mustClose(t, f)
		return fs
	}
	const full = "durable|0123456789"
	fs := build()
	lengths := map[int]bool{}
	for seed := range uint64(64) {
		got := fileState(t, fs.CrashCloneTorn(rand.New(rand.NewPCG(seed, 0))), "/d/a")
		if len(got) < len("durable|") || len(got) > len(full) || got != full[:len(got)] {
			t.Fatalf("seed %d: torn clone = %q, want a prefix of %q at least as long as the synced part", seed, got, full)
		}
		lengths[len(got)] = true
	}
	if len(lengths) < 3 {
		t.Fatalf("64 seeds gave only lengths %v; the torn prefix is not random", lengths)
	}
	// Same state and seed, same clone.
	a := fileState(t, build().CrashCloneTorn(rand.New(rand.NewPCG(7, 7))), "/d/a")
	b := fileState(t, build().CrashCloneTorn(rand.New(rand.NewPCG(7, 7))), "/d/a")
	if a != b {
		t.Fatalf("same seed gave %q and %q", a, b)
	}
	// The torn clone's contents are durable in it: a second crash keeps them.
	c := fs.CrashCloneTorn(rand.New(rand.NewPCG(1, 2)))
	if x, y := fileState(t, c, "/d/a"), fileState(t, c.CrashClone(), "/d/a"); x != y {
		t.Fatalf("torn bytes not durable in the clone: %q then %q", x, y)
	}
}

// TestMemConcurrent runs writers, mappers and crash clones together; it
// asserts under -race that MemFS's locking is complete.
func TestMemConcurrent(t *testing.T) {
	fs := newDurableDir(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			name := fmt.Sprintf("/d/f%d", w)
			f, err := fs.Create(name)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			m, err := f.Map(64)
			if err != nil {
				t.Error(err)
				return
			}
			defer m.Unmap()
			for i := range 200 {
				if _, err := f.Write([]byte{byte(i)}); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if err := f.Sync(); err != nil {
						t.Error(err)
					}
					if err := fs.SyncDir("/d"); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 50 {
				c := fs.CrashClone()
				if _, err := c.ReadDir("/d"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for w := range 4 {
		got := fileState(t, fs.CrashClone(), fmt.Sprintf("/d/f%d", w))
		if len(got) != 191 {
			t.Errorf("f%d: durable length %d, want 191 (last Sync after write 190)", w, len(got))
		}
	}
}
