package jetstream

import (
	"errors"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// fetchSeqs fetches up to n messages, acks each, and returns their stream
// and consumer sequences and delivery counts.
func fetchSeqs(t *testing.T, c njs.Consumer, n int) (stream, cons, dcount []uint64) {
	t.Helper()
	for _, m := range fetchAll(t, c, n, 2*time.Second) {
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, md.Sequence.Stream)
		cons = append(cons, md.Sequence.Consumer)
		dcount = append(dcount, md.NumDelivered)
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	return stream, cons, dcount
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConsumerReset drives CONSUMER.RESET through nats.go (ResetConsumer,
// ResetConsumerToSequence) as nats-server 2.15 answers it: back to the ack
// floor + 1 with the unacknowledged messages delivered again as first
// deliveries and consumer sequences from 1; to an explicit sequence,
// backwards and forwards; info and reset_seq in the reply; and a reset
// that outlives a restart.
func TestConsumerReset(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
		c, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		publishN(t, js, "s.a", 1, 5)
		got := fetchAll(t, c, 3, 2*time.Second)
		if len(got) != 3 {
			t.Fatalf("fetched %d, want 3", len(got))
		}
		if err := got[0].DoubleAck(ctxT(t)); err != nil {
			t.Fatal(err)
		}

		// Empty request: back to ack floor + 1 = 2.
		r, err := js.ResetConsumer(ctxT(t), "S", "C")
		if err != nil {
			t.Fatal(err)
		}
		if r.ResetSeq != 2 || r.Delivered.Stream != 1 || r.Delivered.Consumer != 0 || r.AckFloor.Stream != 1 || r.AckFloor.Consumer != 0 ||
			r.NumAckPending != 0 || r.NumPending != 4 || r.Name != "C" || r.Stream != "S" {
			t.Fatalf("reset reply: reset_seq %d delivered %+v ack floor %+v ack pending %d pending %d", r.ResetSeq, r.Delivered, r.AckFloor, r.NumAckPending, r.NumPending)
		}
		sseq, cseq, dc := fetchSeqs(t, c, 4)
		if !equalU64(sseq, []uint64{2, 3, 4, 5}) || !equalU64(cseq, []uint64{1, 2, 3, 4}) || !equalU64(dc, []uint64{1, 1, 1, 1}) {
			t.Fatalf("after reset: stream %v consumer %v delivered %v", sseq, cseq, dc)
		}

		// An explicit sequence, backwards.
		if r, err = js.ResetConsumerToSequence(ctxT(t), "S", "C", 4); err != nil {
			t.Fatal(err)
		}
		if r.ResetSeq != 4 || r.Delivered.Stream != 3 || r.AckFloor.Stream != 3 || r.NumPending != 2 {
			t.Fatalf("reset to 4: reset_seq %d delivered %+v ack floor %+v pending %d", r.ResetSeq, r.Delivered, r.AckFloor, r.NumPending)
		}

		// Past the end: nothing pending, and the next message is delivered.
		if r, err = js.ResetConsumerToSequence(ctxT(t), "S", "C", 100); err != nil {
			t.Fatal(err)
		}
		if r.ResetSeq != 100 || r.Delivered.Stream != 99 || r.NumPending != 0 {
			t.Fatalf("reset to 100: reset_seq %d delivered %+v pending %d", r.ResetSeq, r.Delivered, r.NumPending)
		}

		// Durable across a restart (the memory store has nothing to keep).
		if r, err = js.ResetConsumerToSequence(ctxT(t), "S", "C", 2); err != nil {
			t.Fatal(err)
		}
		if storage != njs.FileStorage {
			return
		}
		ts = ts.restart()
		if js, err = njs.New(ts.connect()); err != nil {
			t.Fatal(err)
		}
		if c, err = js.Consumer(ctxT(t), "S", "C"); err != nil {
			t.Fatal(err)
		}
		if ci := consumerInfo(t, c); ci.Delivered.Stream != 1 || ci.Delivered.Consumer != 0 || ci.AckFloor.Stream != 1 || ci.NumPending != 4 {
			t.Fatalf("after restart: delivered %+v ack floor %+v pending %d", ci.Delivered, ci.AckFloor, ci.NumPending)
		}
		if sseq, cseq, _ := fetchSeqs(t, c, 1); !equalU64(sseq, []uint64{2}) || !equalU64(cseq, []uint64{1}) {
			t.Fatalf("after restart: stream %v consumer %v", sseq, cseq)
		}
	})
}

// TestConsumerResetErrors: the refusals nats-server makes (10204 for a
// sequence the deliver policy does not allow, 10025 for a body that is not
// the request) with reset_seq 0 in the reply, and jetwal's answer for a
// consumer that does not exist.
func TestConsumerResetErrors(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	publishN(t, js, "s.a", 1, 5)
	for _, cfg := range []njs.ConsumerConfig{
		{Durable: "NEW", DeliverPolicy: njs.DeliverNewPolicy},
		{Durable: "SEQ", DeliverPolicy: njs.DeliverByStartSequencePolicy, OptStartSeq: 3},
	} {
		cfg.AckPolicy = njs.AckExplicitPolicy
		if _, err := s.CreateConsumer(ctxT(t), cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.ResetConsumerToSequence(ctxT(t), "S", "NEW", 2); !errors.Is(err, njs.ErrConsumerInvalidReset) {
		t.Fatalf("deliver new, seq 2: %v, want ErrConsumerInvalidReset", err)
	}
	// The empty form is allowed for every policy.
	if r, err := js.ResetConsumer(ctxT(t), "S", "NEW"); err != nil || r.ResetSeq != 6 {
		t.Fatalf("deliver new, empty: %+v %v", r, err)
	}
	if r, err := js.ResetConsumerToSequence(ctxT(t), "S", "SEQ", 3); err != nil || r.ResetSeq != 3 || r.NumPending != 3 {
		t.Fatalf("by start seq, seq 3: %+v %v", r, err)
	}

	for _, tc := range []struct {
		subj, body string
		code       api.ErrCode
		desc       string
	}{
		{"S.NEW", `{"seq":2}`, api.ErrConsumerInvalidReset, "invalid reset: not allowed"},
		{"S.SEQ", `{"seq":2}`, api.ErrConsumerInvalidReset, "invalid reset: below start seq"},
		{"S.SEQ", `junk`, api.ErrInvalidJSON, ""},
		{"S.SEQ", `{"seq":-1}`, api.ErrInvalidJSON, ""},
		{"S.NOPE", ``, api.ErrConsumerNotFound, "consumer not found"},
		{"NOPE.C", ``, api.ErrStreamNotFound, "stream not found"},
	} {
		var resp struct {
			Type     string        `json:"type"`
			Error    *api.ApiError `json:"error"`
			ResetSeq *uint64       `json:"reset_seq"`
			Config   any           `json:"config"`
		}
		raw := requestJSON(t, nc, api.SubjConsumerReset+tc.subj, tc.body, &resp)
		if resp.Type != api.TypeConsumerReset || resp.Error == nil || resp.Error.ErrCode != tc.code || resp.Error.Code != 400 && resp.Error.Code != 404 ||
			(tc.desc != "" && resp.Error.Description != tc.desc) || resp.ResetSeq == nil || *resp.ResetSeq != 0 || resp.Config != nil {
			t.Errorf("%s %q: %s", tc.subj, tc.body, raw)
		}
	}
	// A refused reset left the consumer as it was.
	c, err := js.Consumer(ctxT(t), "S", "SEQ")
	if err != nil {
		t.Fatal(err)
	}
	if ci := consumerInfo(t, c); ci.Delivered.Stream != 2 || ci.NumPending != 3 {
		t.Fatalf("after refusals: delivered %+v pending %d", ci.Delivered, ci.NumPending)
	}
}

// TestConsumerResetInterest: on an interest stream a reset forward passes
// over messages the consumer then no longer needs, and they go as if
// acknowledged when no other consumer needs them.
func TestConsumerResetInterest(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}, Retention: njs.InterestPolicy})
	for _, name := range []string{"A", "B"} {
		if _, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: name, AckPolicy: njs.AckExplicitPolicy, FilterSubject: "s." + name}); err != nil {
			t.Fatal(err)
		}
	}
	publishN(t, js, "s.A", 1, 3) // 1..3
	publishN(t, js, "s.B", 4, 1) // 4
	publishN(t, js, "s.A", 5, 2) // 5, 6
	if _, err := js.ResetConsumerToSequence(ctxT(t), "S", "A", 6); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	// 1, 2, 3 and 5 went; 4 is B's, 6 still A's.
	if info.State.Msgs != 2 || info.State.FirstSeq != 4 || info.State.LastSeq != 6 {
		t.Fatalf("after reset forward: %+v", info.State)
	}
}

// TestConsumerResetCLI: the pinned CLI's `nats consumer reset`, to the ack
// floor and to a sequence, shows the state the reset left.
func TestConsumerResetCLI(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	c, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "s.a", 1, 3)
	if got := fetchAll(t, c, 3, 2*time.Second); len(got) != 3 {
		t.Fatalf("fetched %d", len(got))
	}
	cl := newCLI(t, ts)
	cl.ok(args("consumer", "reset", "S", "C", "-f"),
		"Last Delivered Message: Consumer sequence: 0 Stream sequence: 0", "Unprocessed Messages: 3")
	cl.ok(args("consumer", "reset", "S", "C", "--sequence", "3", "-f"),
		"Acknowledgment Floor: Consumer sequence: 0 Stream sequence: 2", "Unprocessed Messages: 1")
}
