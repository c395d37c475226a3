package raftlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// buildStore writes indexes 1-400 over several segments on the real disk and
// returns its directory and segment paths, oldest first.
func buildStore(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	s := mustOpen(t, nil, dir, smallOpts)
	for i := uint64(1); i <= 400; i += 20 {
		if err := s.StoreEntries(genEntries(i, 20, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) < 3 {
		t.Fatalf("want several segments, have %d", len(segs))
	}
	return dir, segs
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCorruption damages one file per case and checks what Open, GetEntry
// and Check make of it: a torn tail of the newest segment is cut off and
// noted; damage anywhere else is reported with its file and offset and never
// served.
func TestCorruption(t *testing.T) {
	cases := []struct {
		name     string
		corrupt  func(t *testing.T, dir string, segs []string)
		openErr  bool   // Open must fail with ErrCorrupt
		readErr  uint64 // GetEntry of this index must fail with ErrCorrupt
		last     uint64 // LastIndex after Open, when it succeeds
		damage   string // substring of a Check damage line, "" for none
		noteText string // substring of a Check note
	}{
		{
			name:    "bit flip in a sealed segment",
			corrupt: func(t *testing.T, dir string, segs []string) { flipByte(t, segs[0], segment.HeaderSize+40) },
			readErr: 1, last: 400, damage: "checksum mismatch",
		},
		{
			name:    "bit flip in the middle of the newest segment",
			corrupt: func(t *testing.T, dir string, segs []string) { flipByte(t, segs[len(segs)-1], segment.HeaderSize+40) },
			openErr: true, damage: "checksum mismatch",
		},
		{
			name: "torn tail of the newest segment",
			corrupt: func(t *testing.T, dir string, segs []string) {
				p := segs[len(segs)-1]
				b, _ := os.ReadFile(p)
				// Find the end of written data and cut the last record short.
				end := len(b)
				for end > 0 && b[end-1] == 0 {
					end--
				}
				if err := os.WriteFile(p, b[:end-5], 0o644); err != nil {
					t.Fatal(err)
				}
			},
			last: 399, noteText: "torn tail",
		},
		{
			name: "missing index file is rebuilt",
			corrupt: func(t *testing.T, dir string, segs []string) {
				os.Remove(strings.TrimSuffix(segs[1], ".seg") + IndexSuffix)
			},
			last: 400, noteText: "missing; rebuilt",
		},
		{
			name: "damaged index file is rebuilt",
			corrupt: func(t *testing.T, dir string, segs []string) {
				flipByte(t, strings.TrimSuffix(segs[0], ".seg")+IndexSuffix, 40)
			},
			last:     400,
			noteText: "index checksum mismatch",
		},
		{
			name: "torn update of the meta file keeps the previous value",
			corrupt: func(t *testing.T, dir string, segs []string) {
				s := mustOpen(t, nil, dir, smallOpts)
				s.DeleteRange(0, 0) // no-op: the meta file still has one slot written
				s.Close()
				// Write a second slot by hand as a torn update would leave it:
				// header bytes present, checksum wrong.
				p := filepath.Join(dir, MetaFile)
				b, _ := os.ReadFile(p)
				torn := encodeSlot(slotKindMeta, 2, encodeMeta(300), int64(len(b)/2))
				torn[30] ^= 1
				copy(b[len(b)/2:], torn)
				os.WriteFile(p, b, 0o644)
			},
			last: 400, noteText: "the other slot holds the current value",
		},
		{
			name:    "missing middle segment is a hole",
			corrupt: func(t *testing.T, dir string, segs []string) { os.Remove(segs[1]) },
			openErr: true, damage: "are missing",
		},
		{
			name:    "damaged meta file",
			corrupt: func(t *testing.T, dir string, segs []string) { flipByte(t, filepath.Join(dir, MetaFile), 10) },
			openErr: true, damage: "slot checksum mismatch",
		},
		{
			name: "damaged stable file",
			corrupt: func(t *testing.T, dir string, segs []string) {
				s := mustOpen(t, nil, dir, smallOpts)
				s.SetUint64([]byte("CurrentTerm"), 3)
				s.Close()
				flipByte(t, filepath.Join(dir, StableFile), 14)
			},
			openErr: true, damage: "slot checksum mismatch",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, segs := buildStore(t)
			tc.corrupt(t, dir, segs)
			r, err := Check(vfs.Default, dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.damage == "" && !r.OK() {
				t.Fatalf("Check damage %v, want none", r.Damage)
			}
			if tc.damage != "" && !strings.Contains(strings.Join(r.Damage, "\n"), tc.damage) {
				t.Fatalf("Check damage %v, want one containing %q", r.Damage, tc.damage)
			}
			if tc.damage != "" && !strings.Contains(strings.Join(r.Damage, "\n"), dir) {
				t.Fatalf("Check damage %v does not name the file", r.Damage)
			}
			if tc.noteText != "" && !strings.Contains(strings.Join(r.Notes, "\n"), tc.noteText) {
				t.Fatalf("Check notes %v, want one containing %q", r.Notes, tc.noteText)
			}
			s, err := Open(nil, dir, smallOpts)
			if tc.openErr {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("Open: %v, want ErrCorrupt naming the file", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if last, _ := s.LastIndex(); last != tc.last {
				t.Fatalf("LastIndex %d, want %d", last, tc.last)
			}
			for idx := uint64(1); idx <= tc.last; idx++ {
				var e Entry
				err := s.GetEntry(idx, &e)
				if idx == tc.readErr {
					if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), segs[0]) {
						t.Fatalf("GetEntry(%d) of a damaged record: %v, want ErrCorrupt naming %s", idx, err, segs[0])
					}
					continue
				}
				if want := genEntry(idx, 1); err != nil || !entryEqual(&e, &want) {
					t.Fatalf("GetEntry(%d): %v", idx, err)
				}
			}
			// A rebuilt index is on disk again and matches.
			checkAfter := checkClean
			if tc.readErr != 0 {
				checkAfter = func(testing.TB, vfs.FS, string) *Report { return nil }
			}
			s.Close()
			checkAfter(t, vfs.Default, dir)
		})
	}
}
