package index

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/jetwal/jetwal/subject"
)

// subjModel is the plain reference for the subject index: each subject's
// live sequences, sorted.
type subjModel struct {
	bySubj map[string][]uint64
	subjOf map[uint64]string
	live   []uint64 // live sequences, unordered, for random picks
	pos    map[uint64]int
}

func newSubjModel() *subjModel {
	return &subjModel{bySubj: map[string][]uint64{}, subjOf: map[uint64]string{}, pos: map[uint64]int{}}
}

func (m *subjModel) add(name string, seq uint64) {
	m.bySubj[name] = append(m.bySubj[name], seq)
	m.subjOf[seq] = name
	m.pos[seq] = len(m.live)
	m.live = append(m.live, seq)
}

func (m *subjModel) remove(seq uint64) string {
	name := m.subjOf[seq]
	l := m.bySubj[name]
	i := sort.Search(len(l), func(i int) bool { return l[i] >= seq })
	l = slices.Delete(l, i, i+1)
	if len(l) == 0 {
		delete(m.bySubj, name)
	} else {
		m.bySubj[name] = l
	}
	delete(m.subjOf, seq)
	p := m.pos[seq]
	lastSeq := m.live[len(m.live)-1]
	m.live[p] = lastSeq
	m.pos[lastSeq] = p
	m.live = m.live[:len(m.live)-1]
	delete(m.pos, seq)
	return name
}

func (m *subjModel) matching(filter string) []string {
	var out []string
	for n := range m.bySubj {
		if filter == "" || subject.Match(filter, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// check compares everything the subject index answers with the model.
func (m *subjModel) check(t *testing.T, x *Index, filters []string, rng *rand.Rand, last uint64, tag string) {
	t.Helper()
	s := x.Subj
	if s.Len() != len(m.bySubj) {
		t.Fatalf("%s: Len %d, model %d", tag, s.Len(), len(m.bySubj))
	}
	for name, l := range m.bySubj {
		info, ok := s.Get(name)
		want := SubjectInfo{Msgs: uint64(len(l)), First: l[0], Last: l[len(l)-1]}
		if !ok || info != want {
			t.Fatalf("%s: Get(%q) = %+v %v, want %+v", tag, name, info, ok, want)
		}
	}
	for _, f := range filters {
		want := m.matching(f)
		var got []string
		s.Each(f, func(name string, info SubjectInfo) {
			l := m.bySubj[name]
			if len(l) == 0 || info != (SubjectInfo{Msgs: uint64(len(l)), First: l[0], Last: l[len(l)-1]}) {
				t.Fatalf("%s: Each(%q) gave %q %+v, model has %v", tag, f, name, info, l)
			}
			got = append(got, name)
		})
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Each(%q) = %d subjects, model %d: %v vs %v", tag, f, len(got), len(want), got, want)
		}
		for range 4 {
			start := uint64(rng.Int63n(int64(last)+2)) + 1
			m.checkPlans(t, x, f, want, start, tag)
		}
	}
	for range 8 {
		if len(m.live) == 0 {
			break
		}
		q := m.live[rng.Intn(len(m.live))]
		if got := s.SubjectOf(q); got != m.subjOf[q] {
			t.Fatalf("%s: SubjectOf(%d) = %q, want %q", tag, q, got, m.subjOf[q])
		}
	}
}

func (m *subjModel) checkPlans(t *testing.T, x *Index, f string, names []string, start uint64, tag string) {
	t.Helper()
	var next, prev, count, lastPer uint64
	var hasNext, hasPrev bool
	for _, n := range names {
		l := m.bySubj[n]
		i := sort.Search(len(l), func(i int) bool { return l[i] >= start })
		if i < len(l) {
			if !hasNext || l[i] < next {
				next, hasNext = l[i], true
			}
			count += uint64(len(l) - i)
			lastPer++
		}
		j := sort.Search(len(l), func(i int) bool { return l[i] > start }) - 1
		if j >= 0 && (!hasPrev || l[j] > prev) {
			prev, hasPrev = l[j], true
		}
	}
	live := x.Seqs.Live
	p := x.Subj.PlanFor(f)
	if !p.All && !p.Wide {
		if p.Empty() != (len(names) == 0) {
			t.Fatalf("%s: PlanFor(%q).Empty() = %v with %d subjects", tag, f, p.Empty(), len(names))
		}
		if q, ok := p.NextIn(start, live); ok != hasNext || q != next {
			t.Fatalf("%s: NextIn(%q, %d) = %d %v, want %d %v", tag, f, start, q, ok, next, hasNext)
		}
		if q, ok := p.PrevIn(start, live); ok != hasPrev || q != prev {
			t.Fatalf("%s: PrevIn(%q, %d) = %d %v, want %d %v", tag, f, start, q, ok, prev, hasPrev)
		}
	} else if p.Wide && len(names) <= wideMatch {
		t.Fatalf("%s: PlanFor(%q) is wide with %d subjects", tag, f, len(names))
	}
	ps := x.Subj.PlanSubjects(f)
	if n := ps.CountFrom(start, live); n != count {
		t.Fatalf("%s: CountFrom(%q, %d) = %d, want %d", tag, f, start, n, count)
	}
	if n := ps.CountSubjectsIn(start, ^uint64(0), live); n != lastPer {
		t.Fatalf("%s: CountSubjectsIn(%q, %d, max) = %d, want %d", tag, f, start, n, lastPer)
	}
}

// TestSubjectsAgainstModel drives the index with random appends (string
// and byte-slice subjects, hot subjects and a long tail, stretches of one
// subject that its list keeps as runs), removals and checkpoint round
// trips (version 2, and version 1 read into version 2), and compares every answer with the model; once
// with the real hash, once with hashes narrowed to 16 values so that every
// lookup walks a long collision chain and deletion shifts entries back.
func TestSubjectsAgainstModel(t *testing.T) {
	for _, c := range []struct {
		name  string
		clear uint64 // hash bits cleared
		names int
		ops   int
	}{
		{"hash=full", 0, 6000, 60000},
		{"hash=16values", ^uint64(0xf), 400, 15000},
	} {
		t.Run(c.name, func(t *testing.T) {
			seed := rand.Int63()
			t.Logf("seed %d (replay: set seed in TestSubjectsAgainstModel)", seed)
			rng := rand.New(rand.NewSource(seed))
			pool := make([]string, 0, c.names)
			for i := range c.names - 20 {
				pool = append(pool, fmt.Sprintf("kv.b%d.key-%07d", i%5, i))
			}
			for i := range 20 {
				pool = append(pool, fmt.Sprintf("ev.x%d.y", i))
			}
			filters := []string{"", ">", "kv.>", "kv.b1.*", "*.b2.>", "ev.*.y", "ev.>", "ev.x3.y", "ev.x3.*",
				"*.*.y", "nomatch.>", pool[0], pool[7]}
			x := New()
			x.Subj.setHashClear(c.clear)
			m := newSubjModel()
			var last uint64
			for i := range c.ops {
				switch op := rng.Intn(100); {
				case op < 55 || len(m.live) == 0:
					last++
					var name string
					switch r := rng.Intn(10); {
					case r < 3:
						name = pool[len(pool)-1-rng.Intn(20)] // few subjects, many messages
					case r < 5 && len(m.live) > 0:
						name = m.subjOf[m.live[rng.Intn(len(m.live))]] // an existing one
					default:
						name = pool[rng.Intn(len(pool))]
					}
					if rng.Intn(2) == 0 {
						x.AddBytes(last, Loc{Off: uint32(i)}, []byte(name))
					} else {
						x.Add(last, Loc{Off: uint32(i)}, name)
					}
					m.add(name, last)
					if rng.Intn(200) == 0 { // a stretch of one subject: its list keeps a run
						for range rng.Intn(300) {
							last++
							x.Add(last, Loc{Off: uint32(i)}, name)
							m.add(name, last)
						}
					}
				case op < 62: // a span at once, as compactions and purges remove them
					spanRemove(t, x, m, rng, last, pool, seed)
				case op < 99 || rng.Intn(5) > 0: // a checkpoint round trip now and then
					q := m.live[rng.Intn(len(m.live))]
					if op < 70 { // the subject's oldest, as per-subject limits do
						q = m.bySubj[m.subjOf[q]][0]
					}
					name := m.remove(q)
					if !x.Remove(q, name) {
						t.Fatalf("seed %d: remove %d reported not live", seed, q)
					}
				default:
					b := Encode(x, nil)
					if len(b) != encodedSize(x, nil, false) {
						t.Fatalf("seed %d: encoded %d bytes, encodedSize says %d", seed, len(b), encodedSize(x, nil, false))
					}
					if rng.Intn(3) == 0 { // a checkpoint of the version before, read into this one
						b = checkpointV1(x)
					}
					back, _, err := Decode("mem", b)
					if err != nil {
						t.Fatalf("seed %d: decode: %v", seed, err)
					}
					back.Subj.setHashClear(c.clear)
					x = back
				}
				if i%4000 == 3999 {
					m.check(t, x, filters, rng, last, fmt.Sprintf("seed %d op %d", seed, i))
				}
			}
			// Drain most of it: whole subjects go, the arena compacts.
			for len(m.live) > 50 {
				q := m.live[rng.Intn(len(m.live))]
				x.Remove(q, m.remove(q))
			}
			m.check(t, x, filters, rng, last, fmt.Sprintf("seed %d drained", seed))
			if x.Subj.names.garbage > x.Subj.names.live+pageSize {
				t.Fatalf("seed %d: arena holds %d garbage bytes for %d live", seed, x.Subj.names.garbage, x.Subj.names.live)
			}
		})
	}
}

// spanRemove removes every live message in a random span of sequences,
// of every subject or of one, through Seqs.Delete and one RemoveSpan per
// subject, which is told either the span or the subject's own lowest and
// highest removed sequence (both are valid).
func spanRemove(t *testing.T, x *Index, m *subjModel, rng *rand.Rand, last uint64, pool []string, seed int64) {
	t.Helper()
	lo := 1 + uint64(rng.Int63n(int64(last)))
	hi := min(last, lo+uint64(rng.Intn(400)))
	only := ""
	if rng.Intn(3) == 0 {
		only = pool[len(pool)-1-rng.Intn(20)]
	}
	type span struct{ n, lo, hi uint64 }
	got := map[string]*span{}
	for q := lo; q <= hi; q++ {
		name, ok := m.subjOf[q]
		if !ok || (only != "" && name != only) {
			continue
		}
		m.remove(q)
		if !x.Seqs.Delete(q) {
			t.Fatalf("seed %d: delete %d reported not live", seed, q)
		}
		sp := got[name]
		if sp == nil {
			sp = &span{lo: q}
			got[name] = sp
		}
		sp.n++
		sp.hi = q
	}
	for name, sp := range got {
		if rng.Intn(2) == 0 {
			sp.lo, sp.hi = lo, hi
		}
		x.Subj.RemoveSpan(name, sp.n, sp.lo, sp.hi, x.Seqs.Live)
	}
}

// setHashClear narrows the hash (collision tests) and re-places the entries.
func (x *Subjects) setHashClear(bits uint64) {
	x.hashClear = bits
	old := x.tab.slots
	x.tab.slots = make([]uint32, len(old))
	m := len(old) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		id := x.tab.id(s)
		h := x.hashBytes(x.nameOf(x.ent(id)))
		i := int(h) & m
		for x.tab.slots[i] != 0 {
			i = (i + 1) & m
		}
		x.tab.slots[i] = x.tab.tag(h) | (id + 1)
	}
}
