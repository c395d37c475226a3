package index

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
)

// hostileSubject is the subject of message q in hostileIndex: one subject
// of one message, one of two, a long run, a sparse one kept in varints, a
// mixed one, and a three-token one for wildcards.
func hostileSubject(q uint64) string {
	switch {
	case q == 5:
		return "one.x"
	case q == 10 || q == 1000:
		return "two.x"
	case q >= 100 && q < 400:
		return "run.a"
	case q%7 == 0:
		return "sparse.b"
	case q%5 == 0:
		return "deep.c.x"
	}
	return "mix.c"
}

// hostileIndex is an index of 1200 messages over those subjects, every 13th
// removed (so lists keep removed entries, as they do until rebuilt).
func hostileIndex() *Index {
	x := New()
	const n = 1200
	for q := uint64(1); q <= n; q++ {
		x.Add(q, Loc{Seg: 1, Off: uint32(q * 100)}, hostileSubject(q))
	}
	for q := uint64(13); q <= n; q += 13 {
		x.Remove(q, hostileSubject(q))
	}
	return x
}

// TestSubjectCheckpointHostile: every byte of the subject section of a
// checkpoint flipped (and the checksum recomputed, so the decoder's own
// checks are what is tested): the checkpoint is refused with ErrCorrupt, or
// it decodes to a subject index whose every walk ends, goes one way and
// stays in its subject's bounds, and which survives removing every message
// and adding more.
func TestSubjectCheckpointHostile(t *testing.T) {
	x := hostileIndex()
	enc := Encode(x, nil)
	// The subject section starts where an index without subjects ends its
	// block section: its encoding ends with the subject count, the trailer
	// length and the checksum.
	bare := Encode(&Index{Seqs: x.Seqs, Subj: NewSubjects()}, nil)
	start, end := len(bare)-16, len(enc)-12
	if !bytes.Equal(enc[16:start], bare[16:start]) {
		t.Fatal("the block sections differ: the subject section is not where the test looks")
	}
	if y, _, err := Decode("intact", alignedCopy(enc)); err != nil {
		t.Fatal(err)
	} else if bad := exerciseSubjects(y); bad != "" {
		t.Fatalf("the intact checkpoint: %s", bad)
	}
	refused, decoded := 0, 0
	decoders := []func(string, []byte) (*Index, []byte, error){Decode, DecodeInPlace}
	for o := start; o < end; o++ {
		for _, v := range []byte{0x01, 0xff} {
			c := alignedCopy(enc)
			c[o] ^= v
			reseal(c)
			{
				dec := decoders[o%2] // both decoders, every other byte each
				y, _, err := dec("hostile", c)
				if err != nil {
					if !errors.Is(err, ErrCorrupt) {
						t.Fatalf("byte %d ^ %#x: error without ErrCorrupt: %v", o, v, err)
					}
					refused++
					continue
				}
				decoded++
				if bad := exerciseSubjectsSafely(y); bad != "" {
					t.Fatalf("byte %d ^ %#x: decoded, then %s", o, v, bad)
				}
			}
		}
	}
	if refused == 0 || decoded == 0 {
		t.Fatalf("%d refused, %d decoded: the cases do not reach both outcomes", refused, decoded)
	}
	t.Logf("%d bytes of subject section: %d decodes refused, %d decoded and exercised", end-start, refused, decoded)
}

// TestSubjectCheckpointInconsistent: entries that are each well formed but
// disagree with their lists are refused.
func TestSubjectCheckpointInconsistent(t *testing.T) {
	cases := []struct {
		name string
		edit func(x *Subjects, e *entry, l *seqList)
	}{
		{"more messages than entries", func(x *Subjects, e *entry, l *seqList) { e.msgs = uint32(l.n) + 1 }},
		{"first not in the list", func(x *Subjects, e *entry, l *seqList) { e.first = l.marks[0].seq + 1 }},
		{"last past the list", func(x *Subjects, e *entry, l *seqList) { e.last = l.last + 1 }},
		{"first after last", func(x *Subjects, e *entry, l *seqList) { e.first, e.last = e.last, e.first }},
		{"list last not its last entry", func(x *Subjects, e *entry, l *seqList) { l.last++; e.last = l.last }},
		{"a delta of zero", func(x *Subjects, e *entry, l *seqList) { l.buf[len(l.buf)-1] = 0 }},
		{"a varint cut at its block's end", func(x *Subjects, e *entry, l *seqList) { l.buf[l.marks[1].off-1] |= 0x80 }},
		{"marks overlapping", func(x *Subjects, e *entry, l *seqList) { l.marks[1].seq = l.marks[0].seq + 1 }},
		{"a run past 2^64", func(x *Subjects, e *entry, l *seqList) {
			*l = seqList{marks: []listMark{{seq: math.MaxUint64 - 2, n: 5}}, n: 5, last: 2}
			e.first, e.last, e.msgs = math.MaxUint64-2, 2, 5
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := hostileIndex()
			id, _, ok := x.Subj.lookup("sparse.b")
			if !ok {
				t.Fatal("no sparse.b")
			}
			e := x.Subj.ent(id)
			l := x.Subj.lists.at(e.list - 1)
			if len(l.marks) < 2 || l.run(0) || l.run(1) {
				t.Fatal("sparse.b's list is not two or more blocks of varints")
			}
			tc.edit(x.Subj, e, l)
			_, _, err := Decode("inconsistent", Encode(x, nil))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decoded: %v", err)
			}
		})
	}
	// A subject named what no message can be stored under. ("a.*" can be:
	// nats-server stores a publish to it outside pedantic mode.)
	for _, name := range []string{"", "a..b", ".a", "a.", "a b", "a\tb"} {
		x := New()
		x.Add(1, Loc{Seg: 1, Off: 40}, "ok")
		x.Subj.Add(name, 1)
		if _, _, err := Decode("name", Encode(x, nil)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("subject %q decoded: %v", name, err)
		}
	}
}

// exerciseSubjectsSafely is exerciseSubjects with a panic reported.
func exerciseSubjectsSafely(y *Index) (bad string) {
	defer func() {
		if r := recover(); r != nil {
			bad = fmt.Sprintf("panicked: %v", r)
		}
	}()
	return exerciseSubjects(y)
}

// exerciseSubjects walks every subject and a few wildcards forward and
// backward, counts, then removes every message it found and adds more. It
// returns what it finds wrong: a walk that goes backwards, leaves its
// subject's bounds or does not end.
func exerciseSubjects(y *Index) string {
	live := y.Seqs.Live
	limit := y.Seqs.Len() + 2
	type subj struct {
		name string
		info SubjectInfo
	}
	var subs []subj
	y.Subj.Each(">", func(name string, info SubjectInfo) { subs = append(subs, subj{name, info}) })
	found := map[string][]uint64{}
	for _, f := range []string{">", "*.x", "run.*", "deep.>", "*.c.*", "mix.c"} {
		if bad := walkPlan(y, f, live, limit, nil); bad != "" {
			return bad
		}
	}
	for _, s := range subs {
		var seqs []uint64
		if bad := walkPlan(y, s.name, live, limit, &seqs); bad != "" {
			return bad
		}
		for _, q := range seqs {
			if q < s.info.First || q > s.info.Last {
				return fmt.Sprintf("subject %s: walk found %d outside [%d, %d]", s.name, q, s.info.First, s.info.Last)
			}
			y.Subj.SubjectOf(q)
		}
		found[s.name] = seqs
	}
	for _, s := range subs {
		for _, q := range found[s.name] {
			y.Remove(q, s.name)
		}
		y.Subj.Get(s.name)
	}
	next := uint64(5000)
	for _, s := range subs {
		next++
		y.Add(next, Loc{Seg: 1, Off: 40}, s.name)
		if info, ok := y.Subj.Get(s.name); !ok || info.Last != next {
			return fmt.Sprintf("subject %s: added %d, summary %+v %v", s.name, next, info, ok)
		}
	}
	Encode(y, nil)
	return ""
}

// walkPlan walks filter's plan forward from the start and backward from
// the end, at most limit steps each, appending the forward walk to seqs.
func walkPlan(y *Index, filter string, live func(uint64) bool, limit int, seqs *[]uint64) string {
	p := y.Subj.PlanFor(filter)
	var fwd []uint64
	for start := uint64(0); ; {
		q, ok := p.NextIn(start, live)
		if !ok {
			break
		}
		if q < start {
			return fmt.Sprintf("%s: NextIn(%d) went back to %d", filter, start, q)
		}
		if fwd = append(fwd, q); len(fwd) > limit {
			return fmt.Sprintf("%s: forward walk does not end", filter)
		}
		if q == math.MaxUint64 {
			break
		}
		start = q + 1
	}
	n := 0
	for at := uint64(math.MaxUint64); ; {
		q, ok := p.PrevIn(at, live)
		if !ok {
			break
		}
		if q > at {
			return fmt.Sprintf("%s: PrevIn(%d) went forward to %d", filter, at, q)
		}
		if n++; n > limit {
			return fmt.Sprintf("%s: backward walk does not end", filter)
		}
		if q == 0 {
			break
		}
		at = q - 1
	}
	if n != len(fwd) {
		return fmt.Sprintf("%s: %d forward, %d backward", filter, len(fwd), n)
	}
	p.CountFrom(0, live)
	p.CountSubjectsIn(0, ^uint64(0), live)
	if seqs != nil {
		*seqs = fwd
	}
	return ""
}
