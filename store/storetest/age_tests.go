package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

var ageTests = []suiteTest{
	{"MaxAge/Expires", testMaxAgeExpires},
	{"MaxAge/UpdateLimits", testMaxAgeUpdate},
	{"MaxAge/Long", testMaxAgeLong},
}

// shortAge is the MaxAge of the expiry tests: short enough to wait for,
// and the tests only ever wait for it with a deadline.
const shortAge = 50 * time.Millisecond

// pollUntil calls cond every few milliseconds until it returns true, and
// fails the test if that takes longer than doneTimeout.
func pollUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(doneTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v", what, doneTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitExpired polls until the store is empty, checking on every look that
// expiry only ever removed the oldest messages.
func waitExpired(t testing.TB, s store.StreamStore, lastSeq uint64) {
	t.Helper()
	pollUntil(t, "all messages expired", func() bool {
		st := s.State()
		if st.LastSeq != lastSeq {
			t.Fatalf("LastSeq %d during expiry, want %d", st.LastSeq, lastSeq)
		}
		if st.Msgs > 0 && st.Msgs != st.LastSeq-st.FirstSeq+1 {
			t.Fatalf("expiry left a hole: %s", counters(st))
		}
		return st.Msgs == 0
	})
}

func testMaxAgeExpires(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{MaxAge: shortAge})
	h.fill("age.a", "age.b", "age.a", "age.c", "age.a")
	waitExpired(t, h.s, 5)
	h.wantState(store.State{FirstSeq: 6, LastSeq: 5})
	h.check()
	var m store.Msg
	wantErr(t, "LoadNext after expiry", h.s.LoadNext("", 0, &m), store.ErrEOF)

	// Expiry keeps working for messages stored after the store emptied.
	if seqs := h.fill("age.d", "age.d", "age.e"); seqs[0] != 6 {
		t.Fatalf("append after expiry got seq %d, want 6", seqs[0])
	}
	waitExpired(t, h.s, 8)
	h.wantState(store.State{FirstSeq: 9, LastSeq: 8})
	h.check()
}

func testMaxAgeUpdate(t *testing.T, open openFunc) {
	for _, start := range []time.Duration{0, time.Hour} {
		t.Run(start.String(), func(t *testing.T) {
			h := newHarness(t, open, store.Limits{MaxAge: start})
			h.fill("u.a", "u.b", "u.c")
			if err := h.s.UpdateLimits(store.Limits{MaxAge: shortAge}); err != nil {
				t.Fatal(err)
			}
			waitExpired(t, h.s, 3)
			h.check()
		})
	}
}

func testMaxAgeLong(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{MaxAge: time.Hour, MaxMsgs: 3})
	h.fill("l.a", "l.b", "l.c", "l.d")
	// Nothing is an hour old: only MaxMsgs has removed anything.
	h.wantSeqs(2, 3, 4)
	if err := h.s.Delete(1, false); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Delete(1): %v", err)
	}
	h.check()
}
