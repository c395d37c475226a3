package vfs

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

func newErrorFS(t *testing.T) (*ErrorFS, *MemFS) {
	t.Helper()
	mem := NewMemFS()
	if err := mem.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	return NewErrorFS(mem), mem
}

func TestErrorFSAfterAndTimes(t *testing.T) {
	e, _ := newErrorFS(t)
	e.Inject(Fault{Op: OpWrite, After: 2, Times: 1, Err: syscall.ENOSPC})
	f := mustCreate(t, e, "/d/a")
	defer f.Close()
	var errs []error
	for range 5 {
		_, err := f.Write([]byte("x"))
		errs = append(errs, err)
	}
	for i, err := range errs {
		wantFail := i == 2
		if (err != nil) != wantFail {
			t.Fatalf("write %d: err = %v, want failure %v", i, err, wantFail)
		}
	}
	if !errors.Is(errs[2], syscall.ENOSPC) {
		t.Fatalf("injected error %v is not ENOSPC", errs[2])
	}
	var pe *os.PathError
	if !errors.As(errs[2], &pe) || pe.Path != "/d/a" || pe.Op != "write" {
		t.Fatalf("injected error %#v is not a PathError naming the file", errs[2])
	}
	if got := readFile(t, e, "/d/a"); got != "xxxx" {
		t.Fatalf("contents = %q: the failed write must not reach the file", got)
	}
	if e.Injected() != 1 {
		t.Fatalf("Injected = %d, want 1", e.Injected())
	}
}

func TestErrorFSSticky(t *testing.T) {
	e, _ := newErrorFS(t)
	e.Inject(Fault{Op: OpSync, After: 1, Err: syscall.EIO})
	f := mustCreate(t, e, "/d/a")
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	for i := range 5 {
		if err := f.Sync(); !errors.Is(err, syscall.EIO) {
			t.Fatalf("sync %d after the fault: %v, want EIO every time", i, err)
		}
	}
	e.Clear()
	if err := f.Sync(); err != nil {
		t.Fatalf("sync after Clear: %v", err)
	}
	if e.Injected() != 5 {
		t.Fatalf("Injected = %d, want 5", e.Injected())
	}
}

func TestErrorFSShortWrite(t *testing.T) {
	e, mem := newErrorFS(t)
	e.Inject(Fault{Op: OpWrite, Times: 1, Short: true, Err: syscall.ENOSPC})
	f := mustCreate(t, e, "/d/a")
	defer f.Close()
	n, err := f.Write([]byte("abcdefgh"))
	if n != 4 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("short write = %d, %v; want 4, ENOSPC", n, err)
	}
	e.Inject(Fault{Op: OpWrite, Times: 1, Short: true}) // nil Err means EIO
	n, err = f.WriteAt([]byte("123456"), 10)
	if n != 3 || !errors.Is(err, syscall.EIO) {
		t.Fatalf("short WriteAt = %d, %v; want 3, EIO", n, err)
	}
	if got := fileState(t, mem, "/d/a"); got != "abcd\x00\x00\x00\x00\x00\x00123" {
		t.Fatalf("inner contents = %q", got)
	}
}

func TestErrorFSPathMatch(t *testing.T) {
	e, _ := newErrorFS(t)
	e.Inject(Fault{Op: OpCreate, Path: ".tmp", Err: syscall.ENOSPC})
	if _, err := e.Create("/d/meta.tmp"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("matching create: %v", err)
	}
	if _, err := e.Inner().Stat("/d/meta.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("failed create reached the inner FS: %v", err)
	}
	mustClose(t, mustCreate(t, e, "/d/meta"))

	e.Inject(Fault{Op: OpRename, Path: "final", Err: syscall.EIO})
	if err := e.Rename("/d/meta", "/d/final"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("rename matching the new name: %v", err)
	}
	if err := e.Rename("/d/meta", "/d/other"); err != nil {
		t.Fatalf("non-matching rename: %v", err)
	}
}

func TestErrorFSFileAndFSOps(t *testing.T) {
	cases := []struct {
		op  Op
		run func(fs FS, f File) error
	}{
		{OpOpen, func(fs FS, _ File) error { _, err := fs.OpenRW("/d/a"); return err }},
		{OpRead, func(_ FS, f File) error { _, err := f.ReadAt(make([]byte, 1), 0); return err }},
		{OpTruncate, func(_ FS, f File) error { return f.Truncate(0) }},
		{OpMap, func(_ FS, f File) error { _, err := f.Map(1); return err }},
		{OpSyncDir, func(fs FS, _ File) error { return fs.SyncDir("/d") }},
		{OpRemove, func(fs FS, _ File) error { return fs.RemoveAll("/d/a") }},
		{OpStat, func(_ FS, f File) error { _, err := f.Size(); return err }},
		{OpMkdirAll, func(fs FS, _ File) error { return fs.MkdirAll("/d/sub", 0o755) }},
		{OpReadDir, func(fs FS, _ File) error { _, err := fs.ReadDir("/d"); return err }},
		{OpLock, func(fs FS, _ File) error { _, err := fs.Lock("/d/LOCK"); return err }},
		{OpClose, func(_ FS, f File) error { return f.Close() }},
	}
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			e, _ := newErrorFS(t)
			f := mustCreate(t, e, "/d/a")
			mustWrite(t, f, []byte("x"))
			defer f.Close()
			e.Inject(Fault{Op: c.op, Times: 1, Err: syscall.EROFS})
			if err := c.run(e, f); !errors.Is(err, syscall.EROFS) {
				t.Fatalf("first call: %v, want the injected EROFS", err)
			}
			if c.op == OpClose {
				return // the file is closed now
			}
			if err := c.run(e, f); err != nil {
				t.Fatalf("second call after a Times: 1 fault: %v", err)
			}
		})
	}
}

func TestErrorFSAllocUnsupported(t *testing.T) {
	e, _ := newErrorFS(t)
	e.Inject(Fault{Op: OpAllocate, Err: ErrAllocUnsupported})
	f := mustCreate(t, e, "/d/a")
	defer f.Close()
	if err := f.Allocate(0, 10); err != ErrAllocUnsupported {
		t.Fatalf("Allocate = %v, want bare ErrAllocUnsupported like Default", err)
	}
	mustSize(t, f, 0)
}

// TestErrorFSCountsEveryMatch checks that an operation failed by one fault
// still counts toward another fault's After.
func TestErrorFSCountsEveryMatch(t *testing.T) {
	e, _ := newErrorFS(t)
	e.Inject(Fault{Op: OpSync, Times: 1, Err: syscall.EIO})
	e.Inject(Fault{Op: OpSync, After: 1, Times: 1, Err: syscall.ENOSPC})
	f := mustCreate(t, e, "/d/a")
	defer f.Close()
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync 1: %v, want EIO", err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("sync 2: %v, want ENOSPC", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("sync 3: %v", err)
	}
}

func TestOpString(t *testing.T) {
	if OpWrite.String() != "write" || Op(99).String() != "Op(99)" {
		t.Fatalf("Op names: %q %q", OpWrite, Op(99))
	}
}
