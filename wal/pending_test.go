package wal

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPendingCountsAgreeWithReference: NumPending, which carries a count
// per filter from one call to the next (pending.go), agrees with the
// in-memory store's after every step of a random run of appends over
// twelve subjects, single deletes, purges (filtered, below a sequence,
// keeping some), compactions and truncations, asked for from starts that
// mostly move forward, as a consumer's do, and sometimes back.
func TestPendingCountsAgreeWithReference(t *testing.T) {
	type remover interface {
		Purge(string, uint64, uint64) (uint64, error)
		Compact(uint64) (uint64, error)
		Truncate(uint64) error
		Delete(uint64, bool) error
	}
	s, err := Open(t.TempDir(), Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref := newRef(t)
	rng := rand.New(rand.NewPCG(7, 8))
	filters := []string{"p.1", "p.*", "p.2.>", "q.*", "*.3", "q.1", "p.>"}
	starts := make([]uint64, len(filters))
	subj := func() string {
		if rng.IntN(2) == 0 {
			return fmt.Sprintf("p.%d", rng.IntN(5))
		}
		return fmt.Sprintf("q.%d", rng.IntN(5))
	}
	both := func(what string, f func(st remover) error) {
		e1, e2 := f(s), f(ref)
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("%s: %v, the in-memory store %v", what, e1, e2)
		}
	}
	for step := 0; step < 3000; step++ {
		switch r := rng.IntN(100); {
		case r < 70:
			sub := subj()
			if rng.IntN(10) == 0 {
				sub = fmt.Sprintf("p.2.%d", rng.IntN(3))
			}
			if _, _, err := s.Append(sub, nil, []byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := ref.Append(sub, nil, []byte("x")); err != nil {
				t.Fatal(err)
			}
		case r < 85:
			q := 1 + rng.Uint64N(s.State().LastSeq+1)
			both("delete", func(st remover) error {
				st.Delete(q, false) // not found is fine, in both
				return nil
			})
		case r < 90:
			f, up, keep := filters[rng.IntN(len(filters))], rng.Uint64N(s.State().LastSeq+2), rng.Uint64N(5)
			both("purge", func(st remover) error {
				_, err := st.Purge(f, up, keep)
				return err
			})
		case r < 93:
			q := 1 + rng.Uint64N(s.State().LastSeq+1)
			both("compact", func(st remover) error {
				_, err := st.Compact(q)
				return err
			})
		case r < 95:
			last := s.State().LastSeq
			if last < 3 {
				continue
			}
			q := last - rng.Uint64N(3)
			both("truncate", func(st remover) error {
				return st.Truncate(q)
			})
		}
		for i, f := range filters {
			if rng.IntN(20) == 0 {
				starts[i] = rng.Uint64N(starts[i] + 1) // back
			} else {
				starts[i] += rng.Uint64N(3) // on, as deliveries go
			}
			got, want := s.NumPending(starts[i], f, false), ref.NumPending(starts[i], f, false)
			if got != want {
				t.Fatalf("step %d: NumPending(%d, %q) = %d, the in-memory store %d", step, starts[i], f, got, want)
			}
		}
	}
}

// TestPendingCountsLeaveInFlightOut: messages appended but not yet visible
// (their commit still to come) are not pending, and are counted once when
// they become visible. A full count once took a subject's whole message
// count when the subject started at or after start, in-flight messages
// included, and the carried count then added them again: 1 message
// pending read 3, then 5.
func TestPendingCountsLeaveInFlightOut(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		if _, _, err := s.Append("a", nil, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	setVisible := func(v uint64) {
		s.mu.Lock()
		s.visible = v
		s.mu.Unlock()
	}
	setVisible(1) // 2 and 3 in flight, as between an append and its commit
	if n := s.NumPending(1, "a", false); n != 1 {
		t.Fatalf("with 1 of 3 visible: NumPending = %d, want 1", n)
	}
	setVisible(3)
	if n := s.NumPending(1, "a", false); n != 3 {
		t.Fatalf("with all 3 visible: NumPending = %d, want 3", n)
	}
}

// The last-per-subject count sees only visible messages too: a subject
// whose messages from start on are all in flight is not pending yet.
func TestPendingLastPerSubjectLeavesInFlightOut(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, subj := range []string{"a", "b", "a", "b"} {
		if _, _, err := s.Append(subj, nil, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	setVisible := func(v uint64) {
		s.mu.Lock()
		s.visible = v
		s.mu.Unlock()
	}
	for _, c := range []struct {
		visible, start uint64
		filter         string
		want           uint64
	}{
		{1, 1, ">", 1}, // b's messages are all in flight
		{2, 1, ">", 2},
		{2, 2, "a", 0}, // a's message 3 is in flight
		{2, 2, ">", 1},
		{3, 2, "a", 1},
		{4, 3, "*", 2},
	} {
		setVisible(c.visible)
		if n := s.NumPending(c.start, c.filter, true); n != c.want {
			t.Errorf("visible %d: NumPending(%d, %q, last per subject) = %d, want %d", c.visible, c.start, c.filter, n, c.want)
		}
	}
}
