package jetstream

import (
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// The tests in this file check behaviour a nats-server user relies on:
// interest retention without interest, last_per_subject across a restart,
// replay original and pending counts with overlapping filters.

func streamMsgs(t *testing.T, s njs.Stream) (msgs, last uint64) {
	t.Helper()
	info, err := s.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs, info.State.LastSeq
}

func TestConsumerInterestWithoutInterest(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{Name: "INT", Subjects: []string{"int.>"}, Retention: njs.InterestPolicy})
		// No consumer: nothing is kept, but the sequence advances.
		publishN(t, js, "int.x", 1, 3)
		eventually(t, "messages without interest removed", func() bool {
			n, last := streamMsgs(t, s)
			return n == 0 && last == 3
		})

		c1, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "c1", AckPolicy: njs.AckExplicitPolicy, FilterSubject: "int.x"})
		if err != nil {
			t.Fatal(err)
		}
		// int.z matches no consumer's filter: not kept either.
		publishN(t, js, "int.z", 4, 1)
		publishN(t, js, "int.x", 5, 2)
		eventually(t, "only int.x kept", func() bool {
			n, last := streamMsgs(t, s)
			return n == 2 && last == 6
		})

		if _, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "c2", AckPolicy: njs.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
		publishN(t, js, "int.z", 7, 2)
		publishN(t, js, "int.x", 9, 1)
		eventually(t, "all kept while c2 wants them", func() bool {
			n, _ := streamMsgs(t, s)
			return n == 5
		})
		// c1 takes one int.x and acks it; c2 still wants it.
		m := fetchAll(t, c1, 1, 2*time.Second)
		if len(m) != 1 {
			t.Fatalf("c1 fetched %d", len(m))
		}
		if err := m[0].DoubleAck(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if n, _ := streamMsgs(t, s); n != 5 {
			t.Fatalf("acked by c1 only: %d messages", n)
		}

		// Deleting c2 removes what only it wanted: the int.z messages, and
		// the int.x one c1 has acked.
		if err := s.DeleteConsumer(ctxT(t), "c2"); err != nil {
			t.Fatal(err)
		}
		if n, _ := streamMsgs(t, s); n != 2 {
			t.Fatalf("after deleting c2: %d messages, want the 2 int.x c1 still needs", n)
		}
		if ci := consumerInfo(t, c1); ci.NumPending != 2 || ci.NumAckPending != 0 {
			t.Fatalf("c1 after c2 deleted: pending %d ack pending %d", ci.NumPending, ci.NumAckPending)
		}
		// The last consumer going empties the stream.
		if err := s.DeleteConsumer(ctxT(t), "c1"); err != nil {
			t.Fatal(err)
		}
		if n, last := streamMsgs(t, s); n != 0 || last != 9 {
			t.Fatalf("after deleting c1: %d messages, last %d", n, last)
		}
	})
}

func TestConsumerLastPerSubjectRestart(t *testing.T) {
	ts := startServer(t, fastSync())
	js, _ := njs.New(ts.connect())
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{})
	// a:1 b:2 a:3 a:4 — the picks are 2 (b) and 4 (a); 3 is not one.
	for _, subj := range []string{"orders.a", "orders.b", "orders.a", "orders.a"} {
		if _, err := js.Publish(ctxT(t), subj, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "lps", AckPolicy: njs.AckExplicitPolicy,
		DeliverPolicy: njs.DeliverLastPerSubjectPolicy, FilterSubject: "orders.>"})
	if err != nil {
		t.Fatal(err)
	}
	m := fetchAll(t, c, 1, 2*time.Second)
	if len(m) != 1 {
		t.Fatalf("fetched %d", len(m))
	}
	if md, _ := m[0].Metadata(); md.Sequence.Stream != 2 {
		t.Fatalf("first pick is stream seq %d, want 2", md.Sequence.Stream)
	}
	if err := m[0].DoubleAck(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if ci := consumerInfo(t, c); ci.NumPending != 1 {
		t.Fatalf("before restart: num_pending %d, want 1", ci.NumPending)
	}

	ts = ts.restart()
	js, _ = njs.New(ts.connect())
	if c, err = js.Consumer(ctxT(t), "ORDERS", "lps"); err != nil {
		t.Fatal(err)
	}
	if ci := consumerInfo(t, c); ci.NumPending != 1 {
		t.Fatalf("after restart: num_pending %d, want 1", ci.NumPending)
	}
	if _, err := js.Publish(ctxT(t), "orders.b", []byte("new")); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, m := range fetchAll(t, c, 2, 5*time.Second) {
		md, _ := m.Metadata()
		seqs = append(seqs, md.Sequence.Stream)
	}
	if len(seqs) != 2 || seqs[0] != 4 || seqs[1] != 5 {
		t.Fatalf("after restart delivered stream seqs %v, want [4 5]", seqs)
	}
}

func TestConsumerReplayOriginal(t *testing.T) {
	ts := startServer(t, fastSync())
	js, _ := njs.New(ts.connect())
	s := consumerStream(t, js, njs.MemoryStorage, njs.StreamConfig{})
	const gap = 300 * time.Millisecond
	var pubAt []time.Time
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(gap) // the spacing under test, not synchronisation
		}
		pubAt = append(pubAt, time.Now())
		publishN(t, js, "orders.a", i, 1)
	}
	spacing := []time.Duration{pubAt[1].Sub(pubAt[0]), pubAt[2].Sub(pubAt[1])}
	for _, push := range []bool{false, true} {
		cfg := njs.ConsumerConfig{AckPolicy: njs.AckNonePolicy, ReplayPolicy: njs.ReplayOriginalPolicy}
		var got []time.Time
		start := time.Now()
		if push {
			inbox := "replay.push"
			sub, err := ts.connect().SubscribeSync(inbox)
			if err != nil {
				t.Fatal(err)
			}
			cfg.DeliverSubject = inbox
			if _, err := js.CreateOrUpdatePushConsumer(ctxT(t), "ORDERS", cfg); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				if _, err := sub.NextMsg(10 * time.Second); err != nil {
					t.Fatal(err)
				}
				got = append(got, time.Now())
			}
		} else {
			c, err := s.CreateOrUpdateConsumer(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.Fetch(3, njs.FetchMaxWait(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			for range b.Messages() {
				got = append(got, time.Now())
			}
		}
		if len(got) != 3 {
			t.Fatalf("push=%v: %d messages", push, len(got))
		}
		if d := got[0].Sub(start); d > 2*time.Second {
			t.Errorf("push=%v: first message after %v, want at once", push, d)
		}
		for i := 1; i < 3; i++ {
			d := got[i].Sub(got[i-1])
			// Never early by more than timer slack; late only by load.
			if d < spacing[i-1]-50*time.Millisecond || d > spacing[i-1]+2*time.Second {
				t.Errorf("push=%v: gap %d is %v, published %v apart", push, i, d, spacing[i-1])
			}
		}
	}
}

func TestConsumerOverlappingFiltersPending(t *testing.T) {
	ts := startServer(t, fastSync())
	js, _ := njs.New(ts.connect())
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{})
	publishN(t, js, "orders.b.c", 1, 2) // matches both filters
	publishN(t, js, "orders.x.c", 3, 1)
	publishN(t, js, "orders.b.x", 4, 1)
	publishN(t, js, "orders.x.x", 5, 1) // matches neither
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "ov", AckPolicy: njs.AckExplicitPolicy,
		FilterSubjects: []string{"orders.*.c", "orders.b.*"}})
	if err != nil {
		t.Fatal(err)
	}
	if ci := consumerInfo(t, c); ci.NumPending != 4 {
		t.Fatalf("num_pending %d, want 4", ci.NumPending)
	}
	msgs := fetchAll(t, c, 4, 5*time.Second)
	if len(msgs) != 4 {
		t.Fatalf("fetched %d, want 4", len(msgs))
	}
	if ci := consumerInfo(t, c); ci.NumPending != 0 || ci.NumAckPending != 4 {
		t.Fatalf("after fetch: pending %d ack pending %d", ci.NumPending, ci.NumAckPending)
	}
}
