package raftlog

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// TestWriteFaults fails one disk operation inside each kind of write. The
// call must return the error, later log writes must be refused until the
// store is reopened, and the disk image (as a crash would leave it) must
// reopen to the state before the call, after it, or in between as a crash
// during it may leave (a prefix of a batch, a suffix cut short).
func TestWriteFaults(t *testing.T) {
	cases := []struct {
		name  string
		fault vfs.Fault
		kind  opKind
		op    func(s *Store) error
		post  func(m *model)
	}{
		{"store: write fails", vfs.Fault{Op: vfs.OpWrite, Path: ".seg", Times: 1, Err: syscall.ENOSPC},
			kindStore, func(s *Store) error { return s.StoreEntries(genEntries(201, 5, 1)) },
			func(m *model) { m.store(genEntries(201, 5, 1)) }},
		{"store: short write", vfs.Fault{Op: vfs.OpWrite, Path: ".seg", Times: 1, Short: true},
			kindStore, func(s *Store) error { return s.StoreEntries(genEntries(201, 5, 1)) },
			func(m *model) { m.store(genEntries(201, 5, 1)) }},
		{"store: segment creation fails", vfs.Fault{Op: vfs.OpCreate, Path: ".seg", Times: 1},
			kindStore, func(s *Store) error { return s.StoreEntries(genEntries(201, 200, 1)) },
			func(m *model) { m.store(genEntries(201, 200, 1)) }},
		{"prefix: meta sync fails", vfs.Fault{Op: vfs.OpSync, Path: MetaFile, Times: 1},
			kindPrefix, func(s *Store) error { return s.DeleteRange(1, 150) },
			func(m *model) { m.deleteRange(1, 150) }},
		{"prefix: segment removal fails", vfs.Fault{Op: vfs.OpRemove, Path: ".seg", Times: 1},
			kindPrefix, func(s *Store) error { return s.DeleteRange(1, 150) },
			func(m *model) { m.deleteRange(1, 150) }},
		{"suffix: cut fails", vfs.Fault{Op: vfs.OpTruncate, Path: ".seg", After: 1, Times: 1},
			kindSuffix, func(s *Store) error { return s.DeleteRange(20, 200) },
			func(m *model) { m.deleteRange(20, 200) }},
		{"all: meta write fails", vfs.Fault{Op: vfs.OpWrite, Path: MetaFile, Times: 1, Err: syscall.EIO},
			kindAll, func(s *Store) error { return s.DeleteRange(0, 500) },
			func(m *model) { m.deleteRange(0, 500) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMemFS()
			efs := vfs.NewErrorFS(mem)
			s := mustOpen(t, efs, "/db", smallOpts)
			var pre model
			for i := uint64(1); i <= 200; i += 20 {
				b := genEntries(i, 20, 1)
				if err := s.StoreEntries(b); err != nil {
					t.Fatal(err)
				}
				pre.store(b)
			}
			post := pre.clone()
			tc.post(&post)
			efs.Inject(tc.fault)
			if err := tc.op(s); err == nil {
				t.Fatalf("no error with %v injected", tc.fault.Op)
			}
			efs.Clear()
			if err := s.StoreEntries(genEntries(1000, 1, 1)); err == nil || !strings.Contains(err.Error(), "reopen") {
				t.Fatalf("write after a failure: %v, want the sticky error", err)
			}
			s.Close()
			verifyCrash(t, &crashPoint{img: mem.CrashClone(), kind: tc.kind, pre: pre, post: post}, smallOpts)
		})
	}
}

func TestStableWriteFault(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem)
	s := mustOpen(t, efs, "/db", Options{})
	if err := s.SetUint64([]byte("CurrentTerm"), 5); err != nil {
		t.Fatal(err)
	}
	efs.Inject(vfs.Fault{Op: vfs.OpSync, Path: StableFile, Times: 1})
	if err := s.SetUint64([]byte("CurrentTerm"), 6); err == nil {
		t.Fatal("Set with a failing sync: no error")
	}
	efs.Clear()
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err == nil {
		t.Fatal("Set after a failed Set: no sticky error")
	}
	s.Close()
	r := mustOpen(t, mem.CrashClone(), "/db", Options{})
	defer r.Close()
	if v, ok, err := r.GetUint64([]byte("CurrentTerm")); err != nil || !ok || v != 5 {
		t.Fatalf("CurrentTerm after a failed update = %d, %v, %v; want 5", v, ok, err)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{MinSegmentSize: -1},
		{MaxSegmentSize: 1 << 40},
		{MinSegmentSize: 1 << 22, MaxSegmentSize: 1 << 21},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
		if _, err := Open(vfs.NewMemFS(), "/db", o); err == nil {
			t.Errorf("Open with %+v: no error", o)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestClosed: every method of a closed store returns ErrClosed.
func TestClosed(t *testing.T) {
	s := mustOpen(t, vfs.NewMemFS(), "/db", Options{})
	if err := s.StoreEntries(genEntries(1, 3, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var e Entry
	_, ferr := s.FirstIndex()
	_, lerr := s.LastIndex()
	_, _, gerr := s.Get([]byte("k"))
	for name, err := range map[string]error{
		"StoreEntries": s.StoreEntries(genEntries(4, 1, 1)),
		"GetEntry":     s.GetEntry(1, &e),
		"DeleteRange":  s.DeleteRange(1, 1),
		"FirstIndex":   ferr,
		"LastIndex":    lerr,
		"Set":          s.Set([]byte("k"), nil),
		"Get":          gerr,
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
