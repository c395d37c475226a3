package index

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/jetwal/jetwal/subject"
)

// model is the brute-force reference the index is checked against.
type model map[uint64]string

func (m model) next(filter string, start uint64, last uint64) (uint64, bool) {
	for s := start; s <= last; s++ {
		if subj, ok := m[s]; ok && (filter == ">" || subject.Match(filter, subj)) {
			return s, true
		}
	}
	return 0, false
}

func TestIndexAgainstModel(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d (replay: set seed in TestIndexAgainstModel)", seed)
	rng := rand.New(rand.NewSource(seed))
	x := New()
	m := model{}
	subjects := []string{"a.b", "a.c", "b.x.y", "a.b.c", "z"}
	for i := 0; i < 200; i++ {
		subjects = append(subjects, fmt.Sprintf("many.%d", i))
	}
	var last uint64
	seg := SegID(0)
	for i := 0; i < 20000; i++ {
		switch op := rng.Intn(10); {
		case op < 7:
			last++
			if rng.Intn(500) == 0 {
				seg++
				last += uint64(rng.Intn(5)) // a compacted jump
			}
			s := subjects[rng.Intn(len(subjects))]
			if rng.Intn(3) > 0 {
				s = subjects[rng.Intn(5)]
			}
			x.Add(last, Loc{Seg: seg, Off: uint32(i)}, s)
			m[last] = s
		default:
			if last == 0 {
				continue
			}
			q := uint64(rng.Int63n(int64(last))) + 1
			_, live := m[q]
			if got := x.Remove(q, m[q]); got != live {
				t.Fatalf("seed %d: remove %d: got %v want %v", seed, q, got, live)
			}
			delete(m, q)
		}
	}
	if x.Seqs.Len() != len(m) {
		t.Fatalf("seed %d: len %d want %d", seed, x.Seqs.Len(), len(m))
	}
	filters := []string{">", "a.b", "a.*", "a.>", "*.x.*", "many.*", "many.7", "nope", "*"}
	check := func(x *Index) {
		for _, f := range filters {
			p := x.Subj.PlanFor(f)
			for k := 0; k < 200; k++ {
				start := uint64(rng.Int63n(int64(last)+2)) + 0
				want, wok := m.next(f, start, last)
				var got uint64
				var gok bool
				switch {
				case p.All:
					got, gok = x.Seqs.Next(start)
				case p.Wide:
					for q, ok := x.Seqs.Next(start); ok; q, ok = x.Seqs.Next(q + 1) {
						if subject.Match(f, m[q]) {
							got, gok = q, true
							break
						}
					}
				default:
					got, gok = p.NextIn(start, x.Seqs.Live)
				}
				if got != want || gok != wok {
					t.Fatalf("seed %d: next(%q,%d) = %d,%v want %d,%v", seed, f, start, got, gok, want, wok)
				}
			}
		}
		for _, s := range subjects[:5] {
			info, ok := x.Subj.Get(s)
			var n uint64
			var first, lst uint64
			for q := uint64(1); q <= last; q++ {
				if m[q] == s {
					if first == 0 {
						first = q
					}
					lst = q
					n++
				}
			}
			if (n > 0) != ok || info.Msgs != n || (n > 0 && (info.First != first || info.Last != lst)) {
				t.Fatalf("seed %d: subject %s info %+v ok=%v want n=%d first=%d last=%d", seed, s, info, ok, n, first, lst)
			}
			p := x.Subj.PlanFor(s)
			if got := p.CountFrom(last/2, x.Seqs.Live); got != countFrom(m, s, last/2) {
				t.Fatalf("seed %d: count %s = %d want %d", seed, s, got, countFrom(m, s, last/2))
			}
		}
		for _, f := range filters {
			p := x.Subj.PlanSubjects(f)
			for k := 0; k < 50; k++ {
				lo := uint64(rng.Int63n(int64(last) + 2))
				hi := lo + uint64(rng.Int63n(int64(last)/4+1))
				if k%10 == 0 {
					hi = last
				}
				if got, want := p.CountSubjectsIn(lo, hi, x.Seqs.Live), subjectsIn(m, f, lo, hi); got != want {
					t.Fatalf("seed %d: CountSubjectsIn(%q, %d, %d) = %d want %d", seed, f, lo, hi, got, want)
				}
			}
		}
		if got, want := x.Seqs.CountFrom(last/3), countFrom(m, "", last/3); uint64(got) != want {
			t.Fatalf("seed %d: CountFrom %d want %d", seed, got, want)
		}
	}
	check(x)
	// Round trip through a checkpoint.
	b := Encode(x, []byte("trailer"))
	y, tr, err := Decode("test", b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tr, []byte("trailer")) {
		t.Fatalf("trailer %q", tr)
	}
	check(y)
}

// subjectsIn counts the subjects matching filter with a message in [lo, hi].
func subjectsIn(m model, filter string, lo, hi uint64) uint64 {
	seen := map[string]bool{}
	for q, subj := range m {
		if q >= lo && q <= hi && (filter == ">" || subject.Match(filter, subj)) {
			seen[subj] = true
		}
	}
	return uint64(len(seen))
}

func countFrom(m model, s string, start uint64) uint64 {
	var n uint64
	for q, subj := range m {
		if q >= start && (s == "" || subj == s) {
			n++
		}
	}
	return n
}

func TestCheckpointDamage(t *testing.T) {
	x := New()
	for i := uint64(1); i <= 100; i++ {
		x.Add(i, Loc{Off: uint32(i)}, fmt.Sprintf("s.%d", i%7))
	}
	b := Encode(x, nil)
	for i := 0; i < len(b); i += 7 {
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		if _, _, err := Decode("f", c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
	if _, _, err := Decode("f", b[:len(b)-3]); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
}

func TestPrev(t *testing.T) {
	x := New()
	for i := uint64(1); i <= 100; i++ {
		x.Add(i, Loc{}, fmt.Sprintf("s.%d", i%2))
	}
	x.Remove(99, "s.1")
	p := x.Subj.PlanFor("s.1")
	if q, ok := p.PrevIn(100, x.Seqs.Live); !ok || q != 97 {
		t.Fatalf("prev %d %v", q, ok)
	}
	if q, ok := x.Seqs.Prev(99); !ok || q != 98 {
		t.Fatalf("seqs prev %d", q)
	}
	var del []uint64
	x.Seqs.Deleted(func(s uint64) bool { del = append(del, s); return true })
	if len(del) != 1 || del[0] != 99 {
		t.Fatalf("deleted %v", del)
	}
}
