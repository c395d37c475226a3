package wal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSegmentFileDamage: damage to a whole segment file no longer stops the
// stream from loading. A damaged header over intact records is rewritten
// from the file name (nothing lost); a file with nothing usable is set aside
// as .corrupt and the sequences it held are reported lost; a missing
// segment is a reported gap; a stray file is set aside without touching the
// sequences. Every case is reported, and a second open is clean.
func TestSegmentFileDamage(t *testing.T) {
	cases := []struct {
		name     string
		damage   func(t *testing.T, segs []string)
		lost     bool   // some of the 300 messages are reported lost
		repaired bool   // a header was rewritten
		setAside string // which file is renamed aside ("" none)
	}{
		{name: "sealed header flipped", repaired: true, damage: func(t *testing.T, segs []string) {
			edit(t, segs[1], func(b []byte) []byte { b[10] ^= 1; return b })
		}},
		{name: "newest header flipped", repaired: true, damage: func(t *testing.T, segs []string) {
			edit(t, segs[len(segs)-1], func(b []byte) []byte { b[0] ^= 0x20; return b })
		}},
		{name: "sealed truncated to zero", lost: true, setAside: "1", damage: func(t *testing.T, segs []string) {
			edit(t, segs[1], func(b []byte) []byte { return nil })
		}},
		{name: "sealed deleted", lost: true, damage: func(t *testing.T, segs []string) {
			if err := os.Remove(segs[1]); err != nil {
				t.Fatal(err)
			}
		}},
		// The checkpoint taken at close recorded sequence 300 as durable:
		// the messages cut off are lost, not a torn tail.
		{name: "newest cut in the middle", lost: true, damage: func(t *testing.T, segs []string) {
			edit(t, segs[len(segs)-1], func(b []byte) []byte { return b[:len(b)/2+7] })
		}},
		// The oldest segment deleted: the checkpoint taken at close knew
		// its messages, and nothing was written since.
		{name: "oldest deleted", lost: true, damage: func(t *testing.T, segs []string) {
			if err := os.Remove(segs[0]); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "stray file", setAside: "stray", damage: func(t *testing.T, segs []string) {
			if err := os.WriteFile(filepath.Join(filepath.Dir(segs[0]), "00000000000000000005.seg"), []byte(strings.Repeat("junk", 1000)), 0o640); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Sync: SyncNever, FirstSegmentSize: 16 << 10, SegmentSize: 16 << 10}
			s, err := Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 300; i++ {
				if _, _, err := s.Append("a.b", nil, make([]byte, 100)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
			if len(segs) < 3 {
				t.Fatalf("want at least 3 segments, have %d", len(segs))
			}
			tc.damage(t, segs)

			s, err = Open(dir, o)
			if err != nil {
				t.Fatalf("open after damage: %v", err)
			}
			rep, st := s.Recovery(), s.State()
			if len(rep.Corrupt) == 0 {
				t.Fatalf("damage not reported: %+v", rep)
			}
			lost := 0
			if st.Lost != nil {
				lost = len(st.Lost.Msgs)
			}
			if st.Msgs+uint64(lost) != 300 || (lost > 0) != tc.lost {
				t.Fatalf("%d messages + %d lost, want 300 with lost=%v (report %+v)", st.Msgs, lost, tc.lost, rep)
			}
			if (len(rep.Repaired) > 0) != tc.repaired {
				t.Fatalf("repaired %v, want %v", rep.Repaired, tc.repaired)
			}
			switch tc.setAside {
			case "":
				if len(rep.SetAside) != 0 {
					t.Fatalf("set aside %v", rep.SetAside)
				}
			case "stray":
				if len(rep.SetAside) != 1 || !strings.HasSuffix(rep.SetAside[0], "00000000000000000005.seg.corrupt") {
					t.Fatalf("set aside %v, want the stray file", rep.SetAside)
				}
			default:
				if len(rep.SetAside) != 1 || rep.SetAside[0] != segs[1]+quarantineSuffix {
					t.Fatalf("set aside %v, want %s", rep.SetAside, segs[1]+quarantineSuffix)
				}
			}
			// Sequences go on after the highest one ever handed out.
			seq, _, err := s.Append("a.b", nil, []byte("after"))
			if err != nil || seq != 301 {
				t.Fatalf("append after damage: seq %d, %v; want 301 (last %d)", seq, err, st.LastSeq)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if rep := s.Recovery(); len(rep.Corrupt) != 0 || len(rep.SetAside) != 0 || len(rep.Repaired) != 0 {
				t.Fatalf("second open reports again: %+v", rep)
			}
			if got := s.State(); got.Msgs != st.Msgs+1 {
				t.Fatalf("second open: %d messages, want %d", got.Msgs, st.Msgs+1)
			}
		})
	}
}

func edit(t *testing.T, path string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o640); err != nil {
		t.Fatal(err)
	}
}
