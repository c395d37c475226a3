package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/store"
)

var limitTests = []suiteTest{
	{"Limits", testLimits},
	{"Limits/FailedAppendKeepsSequence", testLimitsKeepSequence},
	{"UpdateLimits", testUpdateLimits},
}

// limitStep appends one message to subj with hdr header bytes and data
// payload bytes, expecting err.
type limitStep struct {
	subj      string
	hdr, data int
	err       error
}

// ap is a step that must succeed; a message to a one-letter subject with n
// payload bytes accounts for n+17 bytes in a store counting as memory
// streams do (store.MemRecordSize), for which the MaxBytes of the cases
// below are stated; widened shows how they grow for other stores.
func ap(subj string, data int) limitStep { return limitStep{subj: subj, data: data} }

// apErr is a step that must fail with err.
func apErr(subj string, data int, err error) limitStep {
	return limitStep{subj: subj, data: data, err: err}
}

// byteSlots says, for the cases of testLimits and testUpdateLimits that set
// MaxBytes, how many messages (and of those, how many with a header) the
// limit is meant to hold: a store whose per-message overhead is larger than
// a memory stream's gets that much more room per message, so each case
// tests the same boundary in every store.
var byteSlots = map[string]struct{ msgs, hdrs int64 }{
	"MaxBytes/DiscardOld":            {3, 0},
	"MaxBytes/DiscardNew":            {3, 0},
	"MaxBytes/DiscardNew/Fits":       {3, 0},
	"MaxBytes/Oversized/DiscardOld":  {1, 0},
	"MaxBytes/Oversized/DiscardNew":  {1, 0},
	"MaxBytes/Header":                {1, 1},
	"MaxBytes+PerSubject/DiscardNew": {3, 0},
	"MaxMsgs+MaxBytes/DiscardOld":    {2, 0},
	"MaxMsgs+MaxBytes/DiscardNew":    {5, 0},
	"update/MaxBytes":                {3, 0},
	"update/MaxBytes/DiscardNew":     {3, 0},
}

// widened returns l with MaxBytes grown for name's byteSlots by what the
// store open returns counts per message (and per header) beyond a memory
// stream.
func widened(t *testing.T, open openFunc, name string, l store.Limits) store.Limits {
	slots, ok := byteSlots[name]
	if !ok || l.MaxBytes <= 0 {
		return l
	}
	probe := newHarness(t, open, store.Limits{})
	size := store.SizeFunc(probe.s)
	perMsg := int64(size("a", nil, nil)) - int64(store.MemRecordSize("a", nil, nil))
	perHdr := int64(size("a", []byte{'h'}, nil)) - int64(size("a", nil, nil)) - 1
	l.MaxBytes += slots.msgs*perMsg + slots.hdrs*perHdr
	return l
}

func testLimits(t *testing.T, open openFunc) {
	old, new := store.DiscardOld, store.DiscardNew
	cases := []struct {
		name   string
		limits store.Limits
		steps  []limitStep
		want   []uint64 // sequences held at the end
	}{
		{"MaxMsgs/DiscardOld", store.Limits{MaxMsgs: 3, Discard: old},
			[]limitStep{ap("a", 1), ap("b", 1), ap("c", 1), ap("d", 1), ap("e", 1)}, []uint64{3, 4, 5}},
		{"MaxMsgs/DiscardNew", store.Limits{MaxMsgs: 3, Discard: new},
			[]limitStep{ap("a", 1), ap("b", 1), ap("c", 1), apErr("d", 1, store.ErrMaxMsgs), apErr("a", 0, store.ErrMaxMsgs)},
			[]uint64{1, 2, 3}},
		{"MaxMsgs/One", store.Limits{MaxMsgs: 1},
			[]limitStep{ap("a", 1), ap("b", 1), ap("a", 1)}, []uint64{3}},
		{"MaxMsgs/NegativeIsUnlimited", store.Limits{MaxMsgs: -1, MaxBytes: -1, MaxMsgsPerSubject: -1, MaxMsgSize: -1, Discard: new},
			[]limitStep{ap("a", 1), ap("a", 1), ap("a", 1), ap("a", 1)}, seqRange(1, 4)},
		{"MaxBytes/DiscardOld", store.Limits{MaxBytes: 150, Discard: old},
			[]limitStep{ap("a", 33), ap("a", 33), ap("a", 33), ap("a", 33), ap("b", 83)}, []uint64{4, 5}},
		{"MaxBytes/DiscardNew", store.Limits{MaxBytes: 150, Discard: new},
			[]limitStep{ap("a", 33), ap("a", 33), ap("a", 33), apErr("a", 33, store.ErrMaxBytes), apErr("b", 0, store.ErrMaxBytes)},
			[]uint64{1, 2, 3}},
		{"MaxBytes/DiscardNew/Fits", store.Limits{MaxBytes: 150, Discard: new},
			[]limitStep{ap("a", 33), ap("a", 33), apErr("a", 34, store.ErrMaxBytes), ap("a", 32), apErr("a", 0, store.ErrMaxBytes)},
			[]uint64{1, 2, 3}},
		{"MaxBytes/Oversized/DiscardOld", store.Limits{MaxBytes: 100, Discard: old},
			[]limitStep{ap("a", 33), apErr("a", 84, store.ErrMaxBytes), ap("a", 83)}, []uint64{2}},
		{"MaxBytes/Oversized/DiscardNew", store.Limits{MaxBytes: 100, Discard: new},
			[]limitStep{apErr("a", 84, store.ErrMaxBytes), ap("a", 83)}, []uint64{1}},
		{"MaxBytes/Header", store.Limits{MaxBytes: 100, Discard: new},
			[]limitStep{{subj: "a", hdr: 40, data: 43}, {subj: "a", hdr: 1, err: store.ErrMaxBytes}}, []uint64{1}},
		{"MaxMsgsPerSubject/DiscardOld", store.Limits{MaxMsgsPerSubject: 2},
			[]limitStep{ap("a", 1), ap("a", 1), ap("b", 1), ap("a", 1), ap("b", 1), ap("b", 1)}, []uint64{2, 4, 5, 6}},
		{"MaxMsgsPerSubject/DiscardNew/Replaces", store.Limits{MaxMsgsPerSubject: 2, Discard: new},
			[]limitStep{ap("a", 1), ap("a", 1), ap("a", 1), ap("b", 1)}, []uint64{2, 3, 4}},
		{"MaxMsgsPerSubject/DiscardNewPerSubject", store.Limits{MaxMsgsPerSubject: 2, Discard: new, DiscardNewPerSubject: true},
			[]limitStep{ap("a", 1), ap("a", 1), apErr("a", 1, store.ErrMaxMsgsPerSubj), ap("b", 1), ap("b", 1), apErr("b", 0, store.ErrMaxMsgsPerSubj)},
			[]uint64{1, 2, 3, 4}},
		{"DiscardNewPerSubject/IgnoredUnderDiscardOld", store.Limits{MaxMsgsPerSubject: 1, Discard: old, DiscardNewPerSubject: true},
			[]limitStep{ap("a", 1), ap("a", 1), ap("b", 1), ap("a", 1)}, []uint64{3, 4}},
		{"MaxMsgs+PerSubject/DiscardNew", store.Limits{MaxMsgs: 3, MaxMsgsPerSubject: 1, Discard: new},
			[]limitStep{ap("a", 1), ap("b", 1), ap("c", 1), ap("a", 1), apErr("d", 1, store.ErrMaxMsgs), ap("b", 2)},
			[]uint64{3, 4, 5}},
		{"MaxBytes+PerSubject/DiscardNew", store.Limits{MaxBytes: 150, MaxMsgsPerSubject: 1, Discard: new},
			[]limitStep{ap("a", 33), ap("b", 33), ap("c", 33), ap("a", 33), apErr("a", 43, store.ErrMaxBytes), ap("a", 23), apErr("d", 0, store.ErrMaxBytes)},
			[]uint64{2, 3, 5}},
		{"MaxMsgs+MaxBytes/DiscardOld", store.Limits{MaxMsgs: 4, MaxBytes: 100},
			[]limitStep{ap("a", 3), ap("a", 3), ap("a", 3), ap("a", 3), ap("a", 3), ap("a", 63)}, []uint64{5, 6}},
		{"MaxMsgs+MaxBytes/DiscardNew", store.Limits{MaxMsgs: 4, MaxBytes: 100, Discard: new},
			[]limitStep{ap("a", 3), ap("a", 3), ap("a", 3), apErr("a", 60, store.ErrMaxBytes), ap("a", 3), apErr("a", 0, store.ErrMaxMsgs)},
			[]uint64{1, 2, 3, 4}},
		{"MaxMsgSize", store.Limits{MaxMsgSize: 10},
			[]limitStep{ap("a", 10), apErr("a", 11, store.ErrMaxMsgSize), {subj: "a", hdr: 6, data: 5, err: store.ErrMaxMsgSize},
				{subj: "a", hdr: 4, data: 6}, {subj: "a", hdr: 11, err: store.ErrMaxMsgSize}},
			[]uint64{1, 2}},
		{"MaxMsgSize/DiscardNew", store.Limits{MaxMsgSize: 5, MaxMsgs: 1, Discard: new},
			[]limitStep{apErr("a", 6, store.ErrMaxMsgSize), ap("a", 5), apErr("a", 1, store.ErrMaxMsgs)}, []uint64{1}},
	}
	for _, c := range cases {
		for _, mode := range []string{"Append", "AppendAsync"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				limits := widened(t, open, c.name, c.limits)
				h := newHarness(t, open, limits)
				for i, s := range c.steps {
					hdr := bytes.Repeat([]byte{'h'}, s.hdr)
					data := bytes.Repeat([]byte{'d'}, s.data)
					before := h.s.State()
					err := appendVia(t, h.s, mode, s.subj, hdr, data)
					what := fmt.Sprintf("step %d (%s hdr=%d data=%d)", i, s.subj, s.hdr, s.data)
					wantErr(t, what, err, s.err)
					if s.err != nil {
						wantCounters(t, h.s.State(), before)
					}
					checkLimitsHold(t, h.s, limits)
				}
				h.wantSeqs(c.want...)
				h.check()
			})
		}
	}
}

// appendVia appends with Append or AppendAsync (waiting for done).
func appendVia(t testing.TB, s store.StreamStore, mode, subj string, hdr, data []byte) error {
	t.Helper()
	if mode == "Append" {
		_, _, err := s.Append(subj, hdr, data)
		return err
	}
	done := make(chan uint64, 1)
	err := s.AppendAsync(subj, hdr, data, func(seq uint64, _ int64, err error) {
		if err != nil {
			t.Errorf("AppendDone(%d): %v", seq, err)
		}
		done <- seq
	})
	if err != nil {
		select {
		case seq := <-done:
			t.Fatalf("AppendAsync returned %v but also called done(%d)", err, seq)
		default:
		}
		return err
	}
	waitDone(t, done)
	return nil
}

// checkLimitsHold fails if the store holds more than its limits allow.
func checkLimitsHold(t testing.TB, s store.StreamStore, l store.Limits) {
	t.Helper()
	st := s.State()
	if l.MaxMsgs > 0 && st.Msgs > uint64(l.MaxMsgs) {
		t.Fatalf("%d msgs over MaxMsgs %d", st.Msgs, l.MaxMsgs)
	}
	if l.MaxBytes > 0 && st.Bytes > uint64(l.MaxBytes) {
		t.Fatalf("%d bytes over MaxBytes %d", st.Bytes, l.MaxBytes)
	}
	if l.MaxMsgsPerSubject > 0 {
		for subj, ss := range s.SubjectsState("") {
			if ss.Msgs > uint64(l.MaxMsgsPerSubject) {
				t.Fatalf("subject %q holds %d msgs over MaxMsgsPerSubject %d", subj, ss.Msgs, l.MaxMsgsPerSubject)
			}
		}
	}
}

func testLimitsKeepSequence(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{MaxMsgs: 2, Discard: store.DiscardNew})
	h.fill("a", "b")
	for range 3 {
		if _, _, err := h.s.Append("c", nil, nil); !errors.Is(err, store.ErrMaxMsgs) {
			t.Fatalf("append over MaxMsgs: %v", err)
		}
	}
	h.del(1)
	if seq := h.append("c", nil, nil); seq != 3 {
		t.Fatalf("append after refusals got seq %d, want 3", seq)
	}
	h.wantState(store.State{Msgs: 2, Bytes: h.size("b", 0, len(payload("b", 1))) + h.size("c", 0, 0), FirstSeq: 2, LastSeq: 3, NumSubjects: 2})
}

func testUpdateLimits(t *testing.T, open openFunc) {
	// Ten messages alternating a, b; each accounts 1+5+16 = 22 bytes in a
	// memory stream (widened adjusts MaxBytes for other stores).
	subjects := []string{"a", "b", "a", "b", "a", "b", "a", "b", "a", "b"}
	cases := []struct {
		name  string
		start store.Limits
		to    store.Limits
		want  []uint64
		// then appends one more message to "a" and expects this error
		thenErr error
	}{
		{name: "MaxMsgs", to: store.Limits{MaxMsgs: 4}, want: seqRange(7, 10)},
		{name: "MaxMsgs/DiscardNew", to: store.Limits{MaxMsgs: 4, Discard: store.DiscardNew}, want: seqRange(7, 10), thenErr: store.ErrMaxMsgs},
		{name: "MaxBytes", to: store.Limits{MaxBytes: 3 * 23}, want: seqRange(8, 10)},
		{name: "MaxBytes/DiscardNew", to: store.Limits{MaxBytes: 3*23 + 10, Discard: store.DiscardNew}, want: seqRange(8, 10), thenErr: store.ErrMaxBytes},
		{name: "MaxMsgsPerSubject", to: store.Limits{MaxMsgsPerSubject: 2}, want: seqRange(7, 10)},
		{name: "MaxMsgsPerSubject/1", to: store.Limits{MaxMsgsPerSubject: 1}, want: []uint64{9, 10}},
		{name: "MaxMsgsPerSubject/DiscardNewPerSubject", to: store.Limits{MaxMsgsPerSubject: 3, Discard: store.DiscardNew, DiscardNewPerSubject: true},
			want: seqRange(5, 10), thenErr: store.ErrMaxMsgsPerSubj},
		{name: "MaxMsgSize-only-new", to: store.Limits{MaxMsgSize: 1}, want: seqRange(1, 10), thenErr: store.ErrMaxMsgSize},
		{name: "Relax", start: store.Limits{MaxMsgs: 10, Discard: store.DiscardNew}, to: store.Limits{}, want: seqRange(1, 10)},
		{name: "Grow", start: store.Limits{MaxMsgs: 10, Discard: store.DiscardNew}, to: store.Limits{MaxMsgs: 11, Discard: store.DiscardNew}, want: seqRange(1, 10)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, open, c.start)
			for i, subj := range subjects {
				h.append(subj, nil, []byte(fmt.Sprintf("msg-%d", i)))
			}
			to := widened(t, open, "update/"+c.name, c.to)
			if err := h.s.UpdateLimits(to); err != nil {
				t.Fatalf("UpdateLimits: %v", err)
			}
			h.wantSeqs(c.want...)
			checkLimitsHold(t, h.s, to)
			h.check()
			_, _, err := h.s.Append("a", nil, []byte("msg-10"))
			wantErr(t, "append after UpdateLimits", err, c.thenErr)
			checkLimitsHold(t, h.s, to)
			h.check()
		})
	}
}
