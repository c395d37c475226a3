package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// compatScenario is the message history of testdata/subjects-v1.ckpt: 300
// messages over subjects of one, two and many messages, with removals
// that leave short subjects whose lists still hold deleted entries.
func compatScenario() (subjects map[uint64]string, removed map[uint64]bool) {
	subjects, removed = map[uint64]string{}, map[uint64]bool{}
	for q := uint64(1); q <= 300; q++ {
		var s string
		switch {
		case q%7 == 0:
			s = fmt.Sprintf("one.%d", q)
		case q%5 == 0:
			s = fmt.Sprintf("few.%d", q%3)
		case q < 40:
			s = fmt.Sprintf("short.%d", q%4)
		default:
			s = "many.x"
		}
		subjects[q] = s
		if (q%3 == 0 && q%7 != 0) || (q < 40 && q%4 != 0 && q > 12) || (q%5 == 0 && q < 280) {
			removed[q] = true
		}
	}
	return subjects, removed
}

// TestSubjectsDecodeV1Checkpoint reads a checkpoint written by the subject
// index before the table (a map of subjects, each with a list even for one
// message, lists holding deleted entries) and checks every answer against
// the history that made it, then keeps using it.
func TestSubjectsDecodeV1Checkpoint(t *testing.T) {
	b, err := os.ReadFile("testdata/subjects-v1.ckpt")
	if err != nil {
		t.Fatal(err)
	}
	x, trailer, err := Decode("subjects-v1.ckpt", b)
	if err != nil || string(trailer) != "trailer" {
		t.Fatalf("decode: %v (trailer %q)", err, trailer)
	}
	subjects, removed := compatScenario()
	m := newSubjModel()
	for q := uint64(1); q <= 300; q++ {
		m.add(subjects[q], q)
	}
	for q := uint64(1); q <= 300; q++ {
		if removed[q] {
			m.remove(q)
		}
	}
	filters := []string{"", ">", "one.*", "few.*", "short.>", "many.x", "*.x", "short.1", "none"}
	rng := rand.New(rand.NewSource(1))
	m.check(t, x, filters, rng, 300, "v1 checkpoint")
	for len(m.live) > 20 { // removals move First/Last through decoded lists
		q := m.live[rng.Intn(len(m.live))]
		x.Remove(q, m.remove(q))
		m.check(t, x, filters, rng, 300, fmt.Sprintf("after removing %d", q))
	}
	for q := uint64(301); q <= 400; q++ {
		s := fmt.Sprintf("short.%d", q%4)
		x.Add(q, Loc{Seg: 1, Off: uint32(q * 100)}, s)
		m.add(s, q)
	}
	m.check(t, x, filters, rng, 400, "after appends")
}

// TestSubjectsDecodeDamagedBody: a checkpoint whose subject section is
// damaged but whose checksum was recomputed (as a faulty writer would make
// it) decodes to an error wrapping ErrCorrupt or to a usable index: never a
// panic, and a decoded index answers its own queries.
func TestSubjectsDecodeDamagedBody(t *testing.T) {
	x := New()
	for q := uint64(1); q <= 60; q++ {
		x.Add(q, Loc{Off: uint32(q)}, fmt.Sprintf("d.%d", q%9))
	}
	for q := uint64(1); q <= 60; q += 4 {
		x.Remove(q, fmt.Sprintf("d.%d", q%9))
	}
	b := Encode(x, nil)
	start := encodedSize(x, nil, false) - x.Subj.encodedSize() - 4 - 8 // the subject section
	for i := start; i < len(b)-12; i++ {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= flip
			binary.LittleEndian.PutUint64(c[len(c)-8:], xxhash.Sum64(c[:len(c)-8]))
			y, _, err := Decode("f", c)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d ^%#x: %v does not wrap ErrCorrupt", i, flip, err)
				}
				continue
			}
			y.Subj.Each(">", func(name string, info SubjectInfo) {
				p := y.Subj.PlanFor(name)
				p.NextIn(0, y.Seqs.Live)
				p.PrevIn(^uint64(0), y.Seqs.Live)
				p.CountFrom(0, y.Seqs.Live)
				y.Subj.Remove(name, info.First, y.Seqs.Live)
			})
		}
	}
}
