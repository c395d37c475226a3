package consumerstate

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// op is one step of a table test. kind: 'D' deliver (dcount n, 0 means 1),
// 'X' deliver without ack, 'A' ack, 'L' ack all, 'N' nak (at n), 'T' term,
// 'R' reset, 'W' rewind.
type op struct {
	kind  byte
	seq   StreamSeq
	n     uint64
	ok    bool    // expected success
	floor SeqPair // expected ack floor afterwards
}

func applyOp(t *testing.T, s *State, i int, o op) {
	t.Helper()
	var ok bool
	switch o.kind {
	case 'D':
		dc := o.n
		if dc == 0 {
			dc = 1
		}
		_, err := s.Deliver(o.seq, dc, int64(1000+i))
		if err != nil && !errors.Is(err, ErrInvalidDelivery) {
			t.Fatalf("step %d: deliver error %v does not wrap ErrInvalidDelivery", i, err)
		}
		ok = err == nil
	case 'X':
		_, err := s.DeliverNoAck(o.seq)
		ok = err == nil
	case 'A':
		ok = s.Ack(o.seq)
	case 'L':
		ok = s.AckAll(o.seq) > 0
	case 'N':
		ok = s.Nak(o.seq, int64(o.n))
	case 'T':
		ok = s.Term(o.seq)
	case 'R':
		s.Reset(o.seq)
		ok = true
	case 'W':
		s.Rewind(o.seq)
		ok = true
	default:
		t.Fatalf("step %d: unknown op %c", i, o.kind)
	}
	if ok != o.ok {
		t.Fatalf("step %d (%c %d): ok = %v, want %v", i, o.kind, o.seq, ok, o.ok)
	}
	if s.AckFloor != o.floor {
		t.Fatalf("step %d (%c %d): ack floor %+v, want %+v", i, o.kind, o.seq, s.AckFloor, o.floor)
	}
	if err := s.Verify(); err != nil {
		t.Fatalf("step %d (%c %d): %v", i, o.kind, o.seq, err)
	}
}

func sp(c ConsumerSeq, s StreamSeq) SeqPair { return SeqPair{Consumer: c, Stream: s} }

func TestAckFloor(t *testing.T) {
	z := SeqPair{}
	tests := []struct {
		name        string
		ops         []op
		delivered   SeqPair
		pending     []StreamSeq
		redelivered map[StreamSeq]uint64
	}{
		{
			name: "in order",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true}, {kind: 'D', seq: 3, ok: true},
				{kind: 'A', seq: 1, ok: true, floor: sp(1, 1)},
				{kind: 'A', seq: 2, ok: true, floor: sp(2, 2)},
				{kind: 'A', seq: 3, ok: true, floor: sp(3, 3)},
			},
			delivered: sp(3, 3),
		},
		{
			name: "explicit out of order",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true}, {kind: 'D', seq: 3, ok: true},
				{kind: 'D', seq: 4, ok: true},
				{kind: 'A', seq: 3, ok: true, floor: z},
				{kind: 'A', seq: 2, ok: true, floor: z},
				{kind: 'A', seq: 1, ok: true, floor: sp(3, 3)},
				{kind: 'A', seq: 4, ok: true, floor: sp(4, 4)},
			},
			delivered: sp(4, 4),
		},
		{
			name: "ack of a message not pending",
			ops: []op{
				{kind: 'A', seq: 1, ok: false},
				{kind: 'D', seq: 1, ok: true},
				{kind: 'A', seq: 2, ok: false},
				{kind: 'A', seq: 1, ok: true, floor: sp(1, 1)},
				{kind: 'A', seq: 1, ok: false, floor: sp(1, 1)},
			},
			delivered: sp(1, 1),
		},
		{
			name: "ack all",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true}, {kind: 'D', seq: 3, ok: true},
				{kind: 'D', seq: 4, ok: true}, {kind: 'D', seq: 5, ok: true},
				{kind: 'L', seq: 3, ok: true, floor: sp(3, 3)},
				{kind: 'L', seq: 2, ok: false, floor: sp(3, 3)},
				{kind: 'L', seq: 4, ok: true, floor: sp(4, 4)},
			},
			delivered: sp(5, 5),
			pending:   []StreamSeq{5},
		},
		{
			name: "ack all past delivered",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true},
				{kind: 'A', seq: 2, ok: true},
				{kind: 'L', seq: 100, ok: true, floor: sp(2, 2)},
			},
			delivered: sp(2, 2),
		},
		{
			name: "ack all after out of order acks",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true}, {kind: 'D', seq: 3, ok: true},
				{kind: 'D', seq: 4, ok: true},
				{kind: 'A', seq: 3, ok: true},
				{kind: 'L', seq: 2, ok: true, floor: sp(3, 3)},
			},
			delivered: sp(4, 4),
			pending:   []StreamSeq{4},
		},
		{
			name: "term counts as acked",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true}, {kind: 'D', seq: 3, ok: true},
				{kind: 'T', seq: 2, ok: true},
				{kind: 'T', seq: 2, ok: false},
				{kind: 'A', seq: 1, ok: true, floor: sp(2, 2)},
				{kind: 'D', seq: 2, n: 2, ok: false, floor: sp(2, 2)}, // terminated: never redelivered
				{kind: 'T', seq: 3, ok: true, floor: sp(3, 3)},
			},
			delivered: sp(3, 3),
		},
		{
			name: "nak keeps the message pending and the floor",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true},
				{kind: 'N', seq: 1, n: 5000, ok: true},
				{kind: 'N', seq: 7, n: 5000, ok: false},
				{kind: 'D', seq: 1, n: 2, ok: true}, // redelivery: consumer seq 3
				{kind: 'N', seq: 2, n: 0, ok: true},
				{kind: 'A', seq: 1, ok: true, floor: sp(1, 1)},
			},
			delivered:   sp(3, 2),
			pending:     []StreamSeq{2},
			redelivered: map[StreamSeq]uint64{},
		},
		{
			name: "redelivery counts",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true},
				{kind: 'D', seq: 1, n: 2, ok: true},
				{kind: 'D', seq: 1, n: 3, ok: true},
				{kind: 'D', seq: 1, n: 2, ok: true}, // a stale count never lowers it
				{kind: 'D', seq: 2, n: 2, ok: true},
				{kind: 'A', seq: 2, ok: true},
			},
			delivered:   sp(6, 2),
			pending:     []StreamSeq{1},
			redelivered: map[StreamSeq]uint64{1: 2},
		},
		{
			name: "filtered consumer skips stream sequences",
			ops: []op{
				{kind: 'D', seq: 5, ok: true}, {kind: 'D', seq: 10, ok: true}, {kind: 'D', seq: 12, ok: true},
				{kind: 'A', seq: 10, ok: true},
				{kind: 'A', seq: 5, ok: true, floor: sp(2, 11)},
				{kind: 'A', seq: 12, ok: true, floor: sp(3, 12)},
				{kind: 'D', seq: 20, ok: true, floor: sp(3, 12)},
			},
			delivered: sp(4, 20),
			pending:   []StreamSeq{20},
		},
		{
			name: "invalid deliveries change nothing",
			ops: []op{
				{kind: 'D', seq: 3, ok: true},
				{kind: 'D', seq: 3, ok: false},       // first delivery again
				{kind: 'D', seq: 2, ok: false},       // below delivered
				{kind: 'D', seq: 4, n: 2, ok: false}, // redelivery of something never delivered
				{kind: 'X', seq: 9, ok: false},       // no-ack delivery with pending
				{kind: 'D', seq: 3, n: 0, ok: false}, // handled as dcount 1: already delivered
			},
			delivered: sp(1, 3),
			pending:   []StreamSeq{3},
		},
		{
			name: "reset",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true}, {kind: 'D', seq: 3, ok: true},
				{kind: 'D', seq: 2, n: 2, ok: true},
				{kind: 'A', seq: 1, ok: true, floor: sp(1, 1)},
				{kind: 'R', seq: 10, ok: true, floor: sp(4, 9)},
				{kind: 'D', seq: 10, ok: true, floor: sp(4, 9)},
				{kind: 'R', seq: 0, ok: true, floor: sp(5, 0)},
				{kind: 'D', seq: 1, ok: true, floor: sp(5, 0)},
			},
			delivered: sp(6, 1),
			pending:   []StreamSeq{1},
		},
		{
			// A consumer reset: consumer sequences restart from 1 too.
			name: "rewind",
			ops: []op{
				{kind: 'D', seq: 1, ok: true}, {kind: 'D', seq: 2, ok: true}, {kind: 'D', seq: 3, ok: true},
				{kind: 'D', seq: 2, n: 2, ok: true},
				{kind: 'A', seq: 1, ok: true, floor: sp(1, 1)},
				{kind: 'W', seq: 2, ok: true, floor: sp(0, 1)},
				{kind: 'D', seq: 2, ok: true, floor: sp(0, 1)},
				{kind: 'A', seq: 2, ok: true, floor: sp(1, 2)},
				{kind: 'W', seq: 7, ok: true, floor: sp(0, 6)},
				{kind: 'D', seq: 7, ok: true, floor: sp(0, 6)},
			},
			delivered: sp(1, 7),
			pending:   []StreamSeq{7},
		},
		{
			name: "no ack",
			ops: []op{
				{kind: 'X', seq: 1, ok: true, floor: sp(1, 1)},
				{kind: 'X', seq: 4, ok: true, floor: sp(2, 4)},
				{kind: 'X', seq: 4, ok: false, floor: sp(2, 4)},
			},
			delivered: sp(2, 4),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s State
			for i, o := range tc.ops {
				applyOp(t, &s, i, o)
			}
			if s.Delivered != tc.delivered {
				t.Errorf("delivered %+v, want %+v", s.Delivered, tc.delivered)
			}
			var got []StreamSeq
			for k := range s.Pending {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.pending) {
				t.Errorf("pending %v, want %v", got, tc.pending)
			}
			if tc.redelivered != nil && len(s.Redelivered) != len(tc.redelivered) {
				t.Errorf("redelivered %v, want %v", s.Redelivered, tc.redelivered)
			}
			for k, v := range tc.redelivered {
				if s.Redelivered[k] != v {
					t.Errorf("redelivered[%d] = %d, want %d", k, s.Redelivered[k], v)
				}
			}
		})
	}
}

func TestNakAndRedeliveryFields(t *testing.T) {
	var s State
	c1, _ := s.Deliver(1, 1, 100)
	s.Deliver(2, 1, 200)
	if !s.Nak(1, 0) {
		t.Fatal("nak of pending message failed")
	}
	if p := s.Pending[1]; p.NakAt != 1 || p.Consumer != c1 || p.Timestamp != 100 {
		t.Fatalf("after immediate nak: %+v", p)
	}
	s.Nak(1, 9000)
	if s.Pending[1].NakAt != 9000 {
		t.Fatalf("delayed nak: NakAt %d, want 9000", s.Pending[1].NakAt)
	}
	c3, err := s.Deliver(1, 2, 300)
	if err != nil || c3 != 3 {
		t.Fatalf("redelivery: cseq %d err %v", c3, err)
	}
	if p := s.Pending[1]; p.NakAt != 0 || p.Timestamp != 300 || p.Consumer != c1 {
		t.Fatalf("after redelivery: %+v (want first consumer seq %d kept, nak cleared)", p, c1)
	}
	if got := s.DeliveryCount(1); got != 2 {
		t.Fatalf("delivery count %d, want 2", got)
	}
	if got := s.DeliveryCount(2); got != 1 {
		t.Fatalf("delivery count %d, want 1", got)
	}
	if got := s.DeliveryCount(3); got != 0 {
		t.Fatalf("delivery count of undelivered %d, want 0", got)
	}
}

func TestVerifyCatchesBrokenStates(t *testing.T) {
	tests := []struct {
		name string
		s    State
	}{
		{"floor beyond delivered", State{Delivered: sp(1, 1), AckFloor: sp(2, 1)}},
		{"nothing pending, floor behind", State{Delivered: sp(3, 3), AckFloor: sp(2, 2)}},
		{"pending at floor", State{Delivered: sp(3, 3), AckFloor: sp(1, 1),
			Pending: map[StreamSeq]Pending{1: {Consumer: 2}}}},
		{"pending beyond delivered", State{Delivered: sp(3, 3), AckFloor: sp(1, 1),
			Pending: map[StreamSeq]Pending{4: {Consumer: 2}}}},
		{"consumer seqs out of order", State{Delivered: sp(3, 3), AckFloor: sp(0, 0),
			Pending: map[StreamSeq]Pending{1: {Consumer: 2}, 2: {Consumer: 1}}}},
		{"redelivered not pending", State{Delivered: sp(3, 3), AckFloor: sp(0, 0),
			Pending: map[StreamSeq]Pending{1: {Consumer: 1}}, Redelivered: map[StreamSeq]uint64{2: 1}}},
		{"zero redelivery count", State{Delivered: sp(3, 3), AckFloor: sp(0, 0),
			Pending: map[StreamSeq]Pending{1: {Consumer: 1}}, Redelivered: map[StreamSeq]uint64{1: 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.Verify(); !errors.Is(err, ErrInconsistent) {
				t.Fatalf("Verify = %v, want ErrInconsistent", err)
			}
		})
	}
}

// model is a naive reimplementation of the state machine: no index, the
// lowest pending message found by scanning.
type model struct {
	delivered, floor SeqPair
	pending          map[StreamSeq]Pending
	rc               map[StreamSeq]uint64
}

func (m *model) min() (StreamSeq, bool) {
	var lo StreamSeq
	found := false
	for k := range m.pending {
		if !found || k < lo {
			lo, found = k, true
		}
	}
	return lo, found
}

func (m *model) remove(sseq StreamSeq) bool {
	if _, ok := m.pending[sseq]; !ok {
		return false
	}
	lo, _ := m.min()
	delete(m.pending, sseq)
	delete(m.rc, sseq)
	if lo == sseq {
		m.raise()
	}
	return true
}

func (m *model) raise() {
	if lo, ok := m.min(); ok {
		m.floor = SeqPair{Consumer: m.pending[lo].Consumer - 1, Stream: lo - 1}
	} else {
		m.floor = m.delivered
	}
}

func (m *model) equal(s *State) bool {
	o := State{Delivered: m.delivered, AckFloor: m.floor, Pending: m.pending, Redelivered: m.rc}
	return o.Equal(s)
}

// TestStateAgainstModel runs random operations on State and on the naive
// model and compares them after every step, with Verify and an
// Encode/Decode round trip.
func TestStateAgainstModel(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	for run := 0; run < 53; run++ {
		var s State
		m := &model{pending: map[StreamSeq]Pending{}, rc: map[StreamSeq]uint64{}}
		next := StreamSeq(1)
		steps, deliverBias := 400, 0
		if run >= 50 { // long runs with a growing pending set
			steps, deliverBias = 4000, 5
		}
		for step := 0; step < steps; step++ {
			ts := int64(rng.Uint64())
			pick := func() StreamSeq { // usually a pending message
				if len(m.pending) > 0 && rng.IntN(5) > 0 {
					keys := make([]StreamSeq, 0, len(m.pending))
					for k := range m.pending {
						keys = append(keys, k)
					}
					slices.Sort(keys)
					return keys[rng.IntN(len(keys))]
				}
				return StreamSeq(rng.IntN(int(next) + 2))
			}
			r := rng.IntN(20)
			if steps > 400 && r == 16 {
				r = 0 // long runs: no ack-all, so the pending set grows
			}
			switch {
			case r < 8+deliverBias:
				sseq := next + StreamSeq(rng.IntN(3))
				next = sseq + 1
				cseq, err := s.Deliver(sseq, 1, ts)
				if err != nil {
					t.Fatalf("seed %d run %d step %d: deliver %d: %v", seed, run, step, sseq, err)
				}
				m.delivered = SeqPair{Consumer: m.delivered.Consumer + 1, Stream: sseq}
				if cseq != m.delivered.Consumer {
					t.Fatalf("seed %d: cseq %d, want %d", seed, cseq, m.delivered.Consumer)
				}
				m.pending[sseq] = Pending{Consumer: cseq, Timestamp: ts}
			case r < 10:
				sseq := pick()
				dc := uint64(2 + rng.IntN(4))
				_, err := s.Deliver(sseq, dc, ts)
				p, ok := m.pending[sseq]
				if (err == nil) != ok {
					t.Fatalf("seed %d step %d: redeliver %d: err %v, pending %v", seed, step, sseq, err, ok)
				}
				if ok {
					m.delivered.Consumer++
					p.Timestamp, p.NakAt = ts, 0
					m.pending[sseq] = p
					if m.rc[sseq] < dc-1 {
						m.rc[sseq] = dc - 1
					}
				}
			case r < 15:
				sseq := pick()
				if got, want := s.Ack(sseq), m.remove(sseq); got != want {
					t.Fatalf("seed %d step %d: ack %d = %v, want %v", seed, step, sseq, got, want)
				}
			case r < 16:
				sseq := pick()
				if got, want := s.Term(sseq), m.remove(sseq); got != want {
					t.Fatalf("seed %d step %d: term %d = %v, want %v", seed, step, sseq, got, want)
				}
			case r < 17:
				sseq := pick()
				n := 0
				lo, _ := m.min()
				for k := range m.pending {
					if k <= sseq {
						delete(m.pending, k)
						delete(m.rc, k)
						n++
					}
				}
				if n > 0 && lo <= sseq {
					m.raise()
				}
				if got := s.AckAll(sseq); got != n {
					t.Fatalf("seed %d step %d: ack all %d = %d, want %d", seed, step, sseq, got, n)
				}
			case r < 19:
				sseq := pick()
				at := ts
				if at <= 0 {
					at = 1
				}
				p, ok := m.pending[sseq]
				if ok {
					p.NakAt = at
					m.pending[sseq] = p
				}
				if got := s.Nak(sseq, ts); got != ok {
					t.Fatalf("seed %d step %d: nak %d = %v, want %v", seed, step, sseq, got, ok)
				}
			default:
				if steps == 400 && rng.IntN(10) == 0 {
					start := StreamSeq(rng.IntN(int(next) + 5))
					s.Reset(start)
					clear(m.pending)
					clear(m.rc)
					m.delivered.Stream = max(start, 1) - 1
					m.floor = m.delivered
					next = max(start, 1)
				}
			}
			if !m.equal(&s) {
				t.Fatalf("seed %d run %d step %d: state %+v differs from model %+v", seed, run, step, s, *m)
			}
			if err := s.Verify(); err != nil {
				t.Fatalf("seed %d run %d step %d: %v", seed, run, step, err)
			}
			if steps > 400 && step%100 != 0 {
				continue
			}
			d, err := Decode(Encode(&s))
			if err != nil {
				t.Fatalf("seed %d run %d step %d: decode: %v", seed, run, step, err)
			}
			if !d.Equal(&s) {
				t.Fatalf("seed %d run %d step %d: round trip changed the state", seed, run, step)
			}
		}
	}
}

// TestIndexSurvivesDirectMaps checks that a State built by hand is indexed
// on first use.
func TestIndexSurvivesDirectMaps(t *testing.T) {
	s := State{
		Delivered: sp(3, 30),
		Pending:   map[StreamSeq]Pending{30: {Consumer: 3}, 10: {Consumer: 1}, 20: {Consumer: 2}},
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	s.Ack(10)
	if s.AckFloor != sp(1, 19) {
		t.Fatalf("floor %+v, want {1 19}", s.AckFloor)
	}
	c := s.Clone()
	c.Ack(20)
	if c.AckFloor != sp(2, 29) || s.AckFloor != sp(1, 19) || len(s.Pending) != 2 {
		t.Fatalf("clone not independent: clone floor %+v, original floor %+v pending %d", c.AckFloor, s.AckFloor, len(s.Pending))
	}
}

// TestOrderIndexStaysBounded acks everything but one message many times
// over and checks the index does not keep the dead entries.
func TestOrderIndexStaysBounded(t *testing.T) {
	var s State
	s.Deliver(1, 1, 0)
	for i := StreamSeq(2); i < 100000; i++ {
		s.Deliver(i, 1, 0)
		s.Ack(i)
	}
	if len(s.order) > 2*s.live+64+1 {
		t.Fatalf("order holds %d entries for %d pending", len(s.order), s.live)
	}
	if s.AckFloor != (SeqPair{}) {
		t.Fatalf("floor moved past pending message 1: %+v", s.AckFloor)
	}
	s.Ack(1)
	if s.AckFloor != s.Delivered {
		t.Fatalf("floor %+v, want delivered %+v", s.AckFloor, s.Delivered)
	}
}
