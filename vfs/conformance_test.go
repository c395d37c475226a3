package vfs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fsUnderTest is one FS implementation and a fresh, existing directory in it.
type fsUnderTest struct {
	name  string
	setup func(t *testing.T) (FS, string)
}

func implementations() []fsUnderTest {
	return []fsUnderTest{
		{"os", func(t *testing.T) (FS, string) { return Default, t.TempDir() }},
		{"mem", func(t *testing.T) (FS, string) {
			fs := NewMemFS()
			if err := fs.MkdirAll("/conf/dir", 0o755); err != nil {
				t.Fatal(err)
			}
			return fs, "/conf/dir"
		}},
		{"error-over-mem", func(t *testing.T) (FS, string) {
			fs := NewMemFS()
			if err := fs.MkdirAll("/conf", 0o755); err != nil {
				t.Fatal(err)
			}
			return NewErrorFS(fs), "/conf"
		}},
	}
}

// conformance lists behaviour every FS must share. Each case gets a fresh FS
// and an empty directory in it.
var conformance = []struct {
	name string
	run  func(t *testing.T, fs FS, dir string)
}{
	{"write-read-reopen", func(t *testing.T, fs FS, dir string) {
		p := filepath.Join(dir, "a")
		f := mustCreate(t, fs, p)
		if f.Name() != p {
			t.Fatalf("Name = %q, want %q", f.Name(), p)
		}
		mustWrite(t, f, []byte("hello "))
		mustWrite(t, f, []byte("world"))
		if _, err := f.WriteAt([]byte("W"), 6); err != nil {
			t.Fatal(err)
		}
		mustSize(t, f, 11)
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		mustClose(t, f)
		g, err := fs.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if got := readAll(t, g); string(got) != "hello World" {
			t.Fatalf("contents = %q", got)
		}
	}},
	{"readat-past-eof", func(t *testing.T, fs FS, dir string) {
		f := mustCreate(t, fs, filepath.Join(dir, "a"))
		defer f.Close()
		mustWrite(t, f, []byte("abc"))
		buf := make([]byte, 5)
		n, err := f.ReadAt(buf, 1)
		if n != 2 || err != io.EOF || string(buf[:n]) != "bc" {
			t.Fatalf("ReadAt across EOF = %d, %v, %q", n, err, buf[:n])
		}
		n, err = f.ReadAt(buf, 10)
		if n != 0 || err != io.EOF {
			t.Fatalf("ReadAt past EOF = %d, %v", n, err)
		}
	}},
	{"writeat-hole-is-zero", func(t *testing.T, fs FS, dir string) {
		f := mustCreate(t, fs, filepath.Join(dir, "a"))
		defer f.Close()
		if _, err := f.WriteAt([]byte("x"), 4); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, f); !bytes.Equal(got, []byte{0, 0, 0, 0, 'x'}) {
			t.Fatalf("contents = %q", got)
		}
	}},
	{"create-truncates", func(t *testing.T, fs FS, dir string) {
		p := filepath.Join(dir, "a")
		f := mustCreate(t, fs, p)
		mustWrite(t, f, []byte("long contents"))
		mustClose(t, f)
		f = mustCreate(t, fs, p)
		defer f.Close()
		mustSize(t, f, 0)
	}},
	{"missing-is-not-exist", func(t *testing.T, fs FS, dir string) {
		p := filepath.Join(dir, "missing")
		checks := map[string]error{}
		_, checks["Open"] = fs.Open(p)
		_, checks["OpenRW"] = fs.OpenRW(p)
		_, checks["Stat"] = fs.Stat(p)
		_, checks["ReadDir"] = fs.ReadDir(p)
		_, checks["Create in missing dir"] = fs.Create(filepath.Join(p, "x"))
		checks["Remove"] = fs.Remove(p)
		checks["Rename"] = fs.Rename(p, filepath.Join(dir, "b"))
		checks["SyncDir"] = fs.SyncDir(p)
		for op, err := range checks {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: err = %v, want ErrNotExist", op, err)
			}
		}
		if err := fs.RemoveAll(p); err != nil {
			t.Errorf("RemoveAll of missing path: %v", err)
		}
	}},
	{"read-only-rejects-writes", func(t *testing.T, fs FS, dir string) {
		p := filepath.Join(dir, "a")
		mustClose(t, mustCreate(t, fs, p))
		f, err := fs.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write([]byte("x")); err == nil {
			t.Error("Write on read-only file succeeded")
		}
		if _, err := f.WriteAt([]byte("x"), 0); err == nil {
			t.Error("WriteAt on read-only file succeeded")
		}
	}},
	{"openrw-writes-from-start", func(t *testing.T, fs FS, dir string) {
		p := filepath.Join(dir, "a")
		f := mustCreate(t, fs, p)
		mustWrite(t, f, []byte("abcdef"))
		mustClose(t, f)
		f, err := fs.OpenRW(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		mustWrite(t, f, []byte("XY"))
		if got := readAll(t, f); string(got) != "XYcdef" {
			t.Fatalf("contents = %q", got)
		}
	}},
	{"truncate", func(t *testing.T, fs FS, dir string) {
		f := mustCreate(t, fs, filepath.Join(dir, "a"))
		defer f.Close()
		mustWrite(t, f, []byte("abcdef"))
		if err := f.Truncate(2); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(4); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, f); !bytes.Equal(got, []byte{'a', 'b', 0, 0}) {
			t.Fatalf("contents = %q", got)
		}
	}},
	{"allocate-extends-with-zeros", func(t *testing.T, fs FS, dir string) {
		f := mustCreate(t, fs, filepath.Join(dir, "a"))
		defer f.Close()
		mustWrite(t, f, []byte("ab"))
		if err := f.Allocate(0, 0); err != nil {
			t.Fatalf("Allocate of zero bytes: %v", err)
		}
		err := f.Allocate(0, 8192)
		if errors.Is(err, ErrAllocUnsupported) {
			// The filesystem under TempDir cannot preallocate: that is the
			// documented outcome, and MemFS never returns it.
			if _, ok := fs.(*MemFS); ok {
				t.Fatal("MemFS returned ErrAllocUnsupported")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		mustSize(t, f, 8192)
		got := readAll(t, f)
		if string(got[:2]) != "ab" || !allZero(got[2:]) {
			t.Fatal("allocate changed data or left non-zero bytes")
		}
		// Allocating inside the file changes nothing.
		if err := f.Allocate(0, 10); err != nil {
			t.Fatal(err)
		}
		mustSize(t, f, 8192)
	}},
	{"rename-replaces", func(t *testing.T, fs FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, fs, a, "new")
		writeFile(t, fs, b, "old")
		if err := fs.Rename(a, b); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.Stat(a); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("source still exists: %v", err)
		}
		if got := readFile(t, fs, b); got != "new" {
			t.Fatalf("target = %q", got)
		}
	}},
	{"open-handle-survives-rename-and-remove", func(t *testing.T, fs FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		f := mustCreate(t, fs, a)
		defer f.Close()
		mustWrite(t, f, []byte("one"))
		if err := fs.Rename(a, b); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, []byte("two"))
		if got := readFile(t, fs, b); got != "onetwo" {
			t.Fatalf("renamed file = %q", got)
		}
		if err := fs.Remove(b); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, []byte("three"))
		if got := readAll(t, f); string(got) != "onetwothree" {
			t.Fatalf("removed file via handle = %q", got)
		}
	}},
	{"dirs", func(t *testing.T, fs FS, dir string) {
		sub := filepath.Join(dir, "x", "y", "z")
		if err := fs.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fs.MkdirAll(sub, 0o755); err != nil {
			t.Fatalf("MkdirAll of existing dir: %v", err)
		}
		for _, n := range []string{"c", "a", "b"} {
			writeFile(t, fs, filepath.Join(dir, n), n)
		}
		names, err := fs.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a", "b", "c", "x"}; !slices.Equal(names, want) {
			t.Fatalf("ReadDir = %q, want %q", names, want)
		}
		fi, err := fs.Stat(filepath.Join(dir, "x"))
		if err != nil || !fi.IsDir || fi.Name != "x" {
			t.Fatalf("Stat dir = %+v, %v", fi, err)
		}
		fi, err = fs.Stat(filepath.Join(dir, "c"))
		if err != nil || fi.IsDir || fi.Name != "c" || fi.Size != 1 {
			t.Fatalf("Stat file = %+v, %v", fi, err)
		}
		if err := fs.MkdirAll(filepath.Join(dir, "a", "sub"), 0o755); err == nil {
			t.Fatal("MkdirAll below a file succeeded")
		}
		if err := fs.Remove(filepath.Join(dir, "x")); err == nil {
			t.Fatal("Remove of non-empty dir succeeded")
		}
		if err := fs.Remove(sub); err != nil {
			t.Fatalf("Remove of empty dir: %v", err)
		}
		if err := fs.SyncDir(dir); err != nil {
			t.Fatal(err)
		}
		if err := fs.RemoveAll(filepath.Join(dir, "x")); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.Stat(filepath.Join(dir, "x", "y")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("RemoveAll left the tree: %v", err)
		}
	}},
	{"lock", func(t *testing.T, fs FS, dir string) {
		p := filepath.Join(dir, "LOCK")
		l, err := fs.Lock(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fs.Stat(p); err != nil {
			t.Fatalf("Lock did not create its file: %v", err)
		}
		if l2, err := fs.Lock(p); err == nil {
			l2.Close()
			t.Fatal("second Lock succeeded while the first is held")
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err = fs.Lock(p)
		if err != nil {
			t.Fatalf("Lock after Close: %v", err)
		}
		mustClose(t, l)
	}},
	{"map-sees-later-writes", func(t *testing.T, fs FS, dir string) {
		f := mustCreate(t, fs, filepath.Join(dir, "a"))
		defer f.Close()
		mustWrite(t, f, bytes.Repeat([]byte{'.'}, 8192))
		m, err := f.Map(8192)
		if err != nil {
			t.Fatal(err)
		}
		if b := m.Bytes(); len(b) != 8192 || b[0] != '.' || b[8191] != '.' {
			t.Fatalf("mapping has %d bytes, ends %q %q", len(b), b[0], b[len(b)-1])
		}
		if _, err := f.WriteAt([]byte("XYZ"), 4096); err != nil {
			t.Fatal(err)
		}
		if got := string(m.Bytes()[4096:4099]); got != "XYZ" {
			t.Fatalf("mapping after write = %q", got)
		}
		if err := m.Unmap(); err != nil {
			t.Fatal(err)
		}
		if err := m.Unmap(); err != nil {
			t.Fatalf("second Unmap: %v", err)
		}
	}},
	{"map-empty-and-negative", func(t *testing.T, fs FS, dir string) {
		f := mustCreate(t, fs, filepath.Join(dir, "a"))
		defer f.Close()
		m, err := f.Map(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Bytes()) != 0 {
			t.Fatal("empty mapping has bytes")
		}
		if err := m.Unmap(); err != nil {
			t.Fatalf("Unmap of empty mapping: %v", err)
		}
		if _, err := f.Map(-1); err == nil {
			t.Fatal("Map(-1) succeeded")
		}
	}},
	{"closed-file", func(t *testing.T, fs FS, dir string) {
		f := mustCreate(t, fs, filepath.Join(dir, "a"))
		mustClose(t, f)
		if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, os.ErrClosed) {
			t.Errorf("ReadAt after Close: %v", err)
		}
		if _, err := f.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Write after Close: %v", err)
		}
		if err := f.Close(); err == nil {
			t.Error("second Close succeeded")
		}
	}},
}

func TestConformance(t *testing.T) {
	for _, impl := range implementations() {
		t.Run(impl.name, func(t *testing.T) {
			for _, c := range conformance {
				t.Run(c.name, func(t *testing.T) {
					fs, dir := impl.setup(t)
					c.run(t, fs, dir)
				})
			}
		})
	}
}

func mustCreate(t *testing.T, fs FS, name string) File {
	t.Helper()
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustWrite(t *testing.T, f File, p []byte) {
	t.Helper()
	if n, err := f.Write(p); err != nil || n != len(p) {
		t.Fatalf("Write = %d, %v", n, err)
	}
}

func mustClose(t *testing.T, c io.Closer) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustSize(t *testing.T, f File, want int64) {
	t.Helper()
	got, err := f.Size()
	if err != nil || got != want {
		t.Fatalf("Size = %d, %v; want %d", got, err, want)
	}
}

// readAll reads a whole file through ReadAt.
func readAll(t *testing.T, f File) []byte {
	t.Helper()
	size, err := f.Size()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, size)
	if n, err := f.ReadAt(buf, 0); n != len(buf) || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	return buf
}

func writeFile(t *testing.T, fs FS, name, contents string) {
	t.Helper()
	f := mustCreate(t, fs, name)
	mustWrite(t, f, []byte(contents))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, f)
}

func readFile(t *testing.T, fs FS, name string) string {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return string(readAll(t, f))
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
