package index

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// encodeSubjV1 writes x's subject section in the version-1 layout (marks of
// 32 entries without counts, runs of a full block without bytes), as the
// writer before version 2 did.
func encodeSubjV1(x *Subjects) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, uint32(x.Len()))
	x.each(func(id uint32) {
		e := x.ent(id)
		name := x.nameOf(e)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(name)))
		b = append(b, name...)
		b = binary.LittleEndian.AppendUint64(b, x.count(id, e))
		b = binary.LittleEndian.AppendUint64(b, e.first)
		b = binary.LittleEndian.AppendUint64(b, e.last)
		var ents []uint64
		if e.list == 0 {
			ents = []uint64{e.first}
			if e.last != e.first {
				ents = append(ents, e.last)
			}
		} else {
			it := x.lists.at(e.list - 1).from(0)
			for q, ok := it.next(); ok; q, ok = it.next() {
				ents = append(ents, q)
			}
		}
		var buf []byte
		type mark struct {
			seq uint64
			off uint32
		}
		var marks []mark
		for i, q := range ents {
			if i%listBlock == 0 {
				marks = append(marks, mark{q, uint32(len(buf))})
			} else {
				buf = binary.AppendUvarint(buf, q-ents[i-1])
			}
			if (i+1)%listBlock == 0 {
				m := marks[len(marks)-1]
				if q-m.seq == listBlock-1 && len(buf)-int(m.off) == listBlock-1 {
					buf = buf[:m.off]
				}
			}
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(ents)))
		b = binary.LittleEndian.AppendUint64(b, ents[len(ents)-1])
		b = binary.LittleEndian.AppendUint32(b, uint32(len(marks)))
		for _, m := range marks {
			b = binary.LittleEndian.AppendUint64(b, m.seq)
			b = binary.LittleEndian.AppendUint32(b, m.off)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(buf)))
		b = append(b, buf...)
	})
	return b
}

// checkpointV1 is x's checkpoint with its subject section in version 1.
func checkpointV1(x *Index) []byte {
	c := []byte(CheckpointMagic)
	c = append(c, 1, 0, 0, 0)
	c = binary.LittleEndian.AppendUint64(c, 0) // body length, set below
	c = append(c, seqSectionV1(x)...)          // blockcodec_test.go
	c = append(c, encodeSubjV1(x.Subj)...)
	c = append(c, 0, 0, 0, 0) // empty trailer
	binary.LittleEndian.PutUint64(c[8:], uint64(len(c)-checkpointHead))
	return binary.LittleEndian.AppendUint64(c, xxhash.Sum64(c))
}

// TestSubjectsCheckpointRuns: subjects that own long stretches of the
// stream (runs), stretches broken by other subjects and by deletions,
// survive a version-2 round trip and a version-1 checkpoint read into the
// version-2 form; the decoded lists equal the ones the appends built (mark
// for mark for version 2, same entries and merged runs for version 1), and
// keep extending runs after the restart.
func TestSubjectsCheckpointRuns(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	filters := []string{"", ">", "run.*", "run.0", "run.1", "gap.>"}
	for round := range 12 {
		x := New()
		m := newSubjModel()
		var last uint64
		add := func(name string) {
			last++
			x.Add(last, Loc{Seg: 1, Off: uint32(last)}, name)
			m.add(name, last)
		}
		for last < 20000 {
			switch r := rng.Intn(10); {
			case r < 6: // a stretch of one subject
				name := fmt.Sprintf("run.%d", rng.Intn(3))
				for range 1 + rng.Intn(500) {
					add(name)
				}
			default:
				add(fmt.Sprintf("gap.%d", rng.Intn(50)))
			}
			if rng.Intn(20) == 0 && len(m.live) > 0 {
				for range rng.Intn(200) {
					if len(m.live) == 0 {
						break
					}
					q := m.live[rng.Intn(len(m.live))]
					if rng.Intn(2) == 0 {
						q = m.bySubj[m.subjOf[q]][0]
					}
					x.Remove(q, m.remove(q))
				}
			}
		}
		tag := fmt.Sprintf("seed %d round %d", seed, round)
		m.check(t, x, filters, rng, last, tag)
		for _, v := range []byte{2, 1} {
			var b []byte
			if v == 2 {
				b = Encode(x, nil)
			} else {
				b = checkpointV1(x)
			}
			y, _, err := Decode("mem", b)
			if err != nil {
				t.Fatalf("%s: decode v%d: %v", tag, v, err)
			}
			x.Subj.each(func(id uint32) {
				e := x.Subj.ent(id)
				name := string(x.Subj.nameOf(e))
				yid, _, ok := y.Subj.lookup(name)
				if !ok {
					t.Fatalf("%s v%d: %s lost", tag, v, name)
				}
				f := y.Subj.ent(yid)
				if (e.list == 0) != (f.list == 0) {
					t.Fatalf("%s v%d: %s list presence differs", tag, v, name)
				}
				if e.list == 0 {
					return
				}
				a, c := x.Subj.lists.at(e.list-1), y.Subj.lists.at(f.list-1)
				if v == 2 && (fmt.Sprint(a.marks) != fmt.Sprint(c.marks) || string(a.buf) != string(c.buf)) {
					t.Fatalf("%s v2: %s: marks %v decoded as %v", tag, name, a.marks, c.marks)
				}
				var want []uint64
				it := a.from(0)
				for q, ok := it.next(); ok; q, ok = it.next() {
					want = append(want, q)
				}
				listWalk(t, c, want, fmt.Sprintf("%s v%d %s", tag, v, name))
			})
			m.check(t, y, filters, rng, last, fmt.Sprintf("%s v%d", tag, v))
			// Appends after the restart: a stretch extends the last run.
			for range 100 {
				last++
				y.Add(last, Loc{Seg: 1, Off: uint32(last)}, "run.0")
				m.add("run.0", last)
			}
			m.check(t, y, filters, rng, last, fmt.Sprintf("%s v%d appended", tag, v))
			x = y
		}
	}
}
