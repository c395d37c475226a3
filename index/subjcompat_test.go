package index

import (
	"fmt"
	"math/rand"
	"os"
	"testing"
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
