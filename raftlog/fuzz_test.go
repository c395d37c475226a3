package raftlog

import (
	"errors"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// fuzzBase writes a store of indexes 1-120 over several segments, with a
// prefix and a suffix deletion behind it and stable values, on a MemFS.
func fuzzBase(tb testing.TB) (*vfs.MemFS, []string) {
	fs := vfs.NewMemFS()
	s, err := Open(fs, "/db", Options{MinSegmentSize: 4096, MaxSegmentSize: 8192})
	if err != nil {
		tb.Fatal(err)
	}
	for i := uint64(1); i <= 130; i += 10 {
		if err := s.StoreEntries(genEntries(i, 10, 1)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.DeleteRange(121, 130); err != nil {
		tb.Fatal(err)
	}
	if err := s.DeleteRange(1, 5); err != nil {
		tb.Fatal(err)
	}
	s.SetUint64([]byte("CurrentTerm"), 9)
	s.Set([]byte("LastVoteCand"), []byte("n1"))
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	names, err := fs.ReadDir("/db")
	if err != nil {
		tb.Fatal(err)
	}
	var files []string
	for _, n := range names {
		if n != LockFile {
			files = append(files, "/db/"+n)
		}
	}
	return fs, files
}

// FuzzRaftlogRecover damages a store's files as the input says (flip, zero
// or cut bytes, remove a file, append garbage) and opens it. Open and Check
// must not panic; an opened store must serve each index in its range as the
// entry written there or an ErrCorrupt error, never other bytes, and must
// take new entries after its last one.
func FuzzRaftlogRecover(f *testing.F) {
	base, files := fuzzBase(f)
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 40})
	f.Add([]byte{1, 1, 0, 100, 2, 2, 0, 60})
	f.Add([]byte{3, 3, 0, 0})
	f.Add([]byte{5, 0, 1, 200, 7, 1, 0, 33, 9, 2, 0, 90})
	f.Fuzz(func(t *testing.T, in []byte) {
		fs := base.CrashClone()
		for i := 0; i+4 <= len(in) && i < 64; i += 4 {
			damage(fs, files[int(in[i])%len(files)], in[i+1]%5, int64(in[i+2])<<8|int64(in[i+3]))
		}
		if _, err := Check(fs, "/db"); err != nil {
			t.Fatalf("Check: %v", err)
		}
		s, err := Open(fs, "/db", Options{MinSegmentSize: 4096, MaxSegmentSize: 8192})
		if err != nil {
			return
		}
		defer s.Close()
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		if first > last || (first == 0) != (last == 0) || last > 120 {
			t.Fatalf("range [%d, %d] after damage to a store of [6, 120]", first, last)
		}
		for idx := first; idx <= last && first != 0; idx++ {
			var e Entry
			err := s.GetEntry(idx, &e)
			if errors.Is(err, ErrCorrupt) {
				continue
			}
			if want := genEntry(idx, 1); err != nil || !entryEqual(&e, &want) {
				t.Fatalf("GetEntry(%d): %v, entry %+v", idx, err, e)
			}
		}
		next := last + 1
		if last == 0 {
			next = 1
		}
		if err := s.StoreEntries(genEntries(next, 3, 2)); err != nil {
			return // e.g. a damaged file refused a write: reported, not served
		}
		var e Entry
		if err := s.GetEntry(next+2, &e); err != nil || e.Term != 2 {
			t.Fatalf("GetEntry(%d) after append: %v", next+2, err)
		}
	})
}

// damage applies one change to a file of fs.
func damage(fs *vfs.MemFS, path string, op byte, arg int64) {
	fi, err := fs.Stat(path)
	if err != nil {
		return
	}
	f, err := fs.OpenRW(path)
	if err != nil {
		return
	}
	defer f.Close()
	off := arg
	if fi.Size > 0 {
		off = arg % fi.Size
	}
	switch op {
	case 0: // flip a bit
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off); err == nil {
			b[0] ^= 1 << (arg % 8)
			f.WriteAt(b, off)
		}
	case 1: // cut the file
		f.Truncate(off)
	case 2: // zero a sector's worth
		if fi.Size > 0 {
			f.WriteAt(make([]byte, min(512, fi.Size-off)), off)
		}
	case 3: // remove it
		f.Close()
		fs.Remove(path)
	case 4: // append garbage
		g := make([]byte, 1+arg%64)
		for i := range g {
			g[i] = byte(arg) + byte(i)
		}
		f.WriteAt(g, fi.Size)
	}
	f.Sync()
}
