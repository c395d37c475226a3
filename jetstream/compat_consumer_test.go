package jetstream

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Consumer positions compared with nats-server v2.15.2: where a new
// consumer starts once messages are gone, and where a purge leaves one.

// seqs is a consumer's delivered and ack floor stream sequences.
func seqs(t *testing.T, c njs.Consumer) [2]uint64 {
	t.Helper()
	ci := consumerInfo(t, c)
	return [2]uint64{ci.Delivered.Stream, ci.AckFloor.Stream}
}

func TestCompatConsumerStartAfterRemoval(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		// Interest: a's acks remove 1..4, b then starts at 5.
		in := consumerStream(t, js, storage, njs.StreamConfig{Name: "I", Subjects: []string{"i.*"}, Retention: njs.InterestPolicy})
		a, err := in.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "a", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		publishN(t, js, "i.a", 1, 3)
		publishN(t, js, "i.b", 4, 1)
		for _, m := range fetchAll(t, a, 4, time.Second) {
			if err := m.DoubleAck(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, "interest removal", func() bool {
			info, err := in.Info(ctxT(t))
			return err == nil && info.State.Msgs == 0
		})
		for _, cfg := range []njs.ConsumerConfig{
			{Durable: "all"},
			{Durable: "last_b", DeliverPolicy: njs.DeliverLastPolicy, FilterSubject: "i.b"},
			{Durable: "lps_b", DeliverPolicy: njs.DeliverLastPerSubjectPolicy, FilterSubject: "i.b"},
			{Durable: "seq1", DeliverPolicy: njs.DeliverByStartSequencePolicy, OptStartSeq: 1},
			{Durable: "new", DeliverPolicy: njs.DeliverNewPolicy},
		} {
			cfg.AckPolicy = njs.AckExplicitPolicy
			c, err := in.CreateConsumer(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := seqs(t, c); got != [2]uint64{4, 4} {
				t.Errorf("%s on interest stream after removal: delivered/ack floor %v, want [4 4]", cfg.Durable, got)
			}
		}

		// Work queue: the deleted consumer's acks removed 1..2.
		wq := consumerStream(t, js, storage, njs.StreamConfig{Name: "W", Subjects: []string{"w.*"}, Retention: njs.WorkQueuePolicy})
		publishN(t, js, "w.a", 1, 2)
		w, err := wq.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "w", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fetchAll(t, w, 2, time.Second) {
			if err := m.DoubleAck(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		if err := wq.DeleteConsumer(ctxT(t), "w"); err != nil {
			t.Fatal(err)
		}
		w2, err := wq.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "w2", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(t, w2); got != [2]uint64{2, 2} {
			t.Errorf("work queue consumer after removal: %v, want [2 2]", got)
		}

		// An opt_start_seq past the end is kept; an empty stream starts at 0.
		s := consumerStream(t, js, storage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
		far, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "far", DeliverPolicy: njs.DeliverByStartSequencePolicy, OptStartSeq: 30})
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(t, far); got != [2]uint64{29, 29} {
			t.Errorf("opt_start_seq 30 on an empty stream: %v, want [29 29]", got)
		}
		empty, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "last", DeliverPolicy: njs.DeliverLastPolicy})
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(t, empty); got != [2]uint64{0, 0} {
			t.Errorf("deliver last on an empty stream: %v, want [0 0]", got)
		}
	})
}

func TestCompatConsumerAfterPurge(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
		for _, subj := range []string{"s.a", "s.a", "s.b", "s.a", "s.b", "s.a", "s.a", "s.a"} {
			publishN(t, js, subj, 0, 1)
		}
		p, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		fb, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "fb", AckPolicy: njs.AckExplicitPolicy, FilterSubject: "s.b"})
		if err != nil {
			t.Fatal(err)
		}
		if got := fetchAll(t, p, 5, time.Second); len(got) != 5 {
			t.Fatalf("fetched %d", len(got))
		}
		// Purging s.b moves fb (all of whose subjects went) to the end; p,
		// wider, only loses the purged pending messages 3 and 5.
		if err := s.Purge(ctxT(t), njs.WithPurgeSubject("s.b")); err != nil {
			t.Fatal(err)
		}
		if got := seqs(t, fb); got != [2]uint64{8, 8} {
			t.Errorf("fb after purging s.b: %v, want [8 8]", got)
		}
		if ci := consumerInfo(t, p); ci.NumAckPending != 3 || ci.Delivered.Stream != 5 || ci.AckFloor.Stream != 0 || ci.NumPending != 3 {
			t.Errorf("p after purging s.b: pending acks %d delivered %d floor %d num_pending %d, want 3 5 0 3",
				ci.NumAckPending, ci.Delivered.Stream, ci.AckFloor.Stream, ci.NumPending)
		}
		if err := s.Purge(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		ci := consumerInfo(t, p)
		if ci.NumAckPending != 0 || ci.Delivered != (njs.SequenceInfo{Consumer: 5, Stream: 8, Last: ci.Delivered.Last}) ||
			ci.AckFloor.Consumer != 5 || ci.AckFloor.Stream != 8 {
			t.Errorf("p after purge: delivered %+v ack floor %+v pending %d", ci.Delivered, ci.AckFloor, ci.NumAckPending)
		}
		q, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "q", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(t, q); got != [2]uint64{8, 8} {
			t.Errorf("consumer created after purge: %v, want [8 8]", got)
		}
		publishN(t, js, "s.a", 9, 1)
		if got := fetchAll(t, p, 5, time.Second); len(got) != 1 || string(got[0].Data()) != "msg-9" {
			t.Fatalf("after purge fetched %d", len(got))
		}
		if md, _ := fetchAll(t, q, 5, time.Second)[0].Metadata(); md.Sequence.Stream != 9 {
			t.Fatalf("q got stream seq %d", md.Sequence.Stream)
		}
	})
}

// fetchOne pulls one message and returns its stream sequence and delivery
// count (0, 0 when none came within wait).
func fetchOne(t *testing.T, c njs.Consumer, wait time.Duration) (njs.Msg, uint64, uint64) {
	t.Helper()
	got := fetchAll(t, c, 1, wait)
	if len(got) == 0 {
		return nil, 0, 0
	}
	md, err := got[0].Metadata()
	if err != nil {
		t.Fatal(err)
	}
	return got[0], md.Sequence.Stream, md.NumDelivered
}

func TestCompatMaxDeliverKeepsAckFloor(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "W", Subjects: []string{"w.*"}, Retention: njs.WorkQueuePolicy})
	publishN(t, js, "w.a", 1, 1)
	cfg := njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy, MaxDeliver: 2, AckWait: 300 * time.Millisecond}
	c, err := s.CreateConsumer(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Message 1 is delivered twice and never acked.
	for want := uint64(1); want <= 2; want++ {
		if _, seq, dc := fetchOne(t, c, 3*time.Second); seq != 1 || dc != want {
			t.Fatalf("delivery %d: seq %d count %d", want, seq, dc)
		}
	}
	// A pull waiting when it is due a third time sets it aside.
	eventually(t, "message 1 set aside", func() bool {
		if m, seq, dc := fetchOne(t, c, 500*time.Millisecond); m != nil {
			t.Fatalf("delivered past max_deliver: seq %d count %d", seq, dc)
		}
		return consumerInfo(t, c).NumAckPending == 0
	})
	// No pull left waiting, so that none takes the messages published next.
	eventually(t, "no waiting pull", func() bool { return consumerInfo(t, c).NumWaiting == 0 })
	ci := consumerInfo(t, c)
	// As nats-server: the floor stays below message 1, which is still
	// counted as redelivered but no longer awaits an ack.
	if ci.AckFloor.Stream != 0 || ci.NumRedelivered != 1 || ci.Delivered.Stream != 1 {
		t.Fatalf("after max deliver: floor %d redelivered %d delivered %d, want 0 1 1",
			ci.AckFloor.Stream, ci.NumRedelivered, ci.Delivered.Stream)
	}
	if info, _ := s.Info(ctxT(t)); info.State.Msgs != 1 {
		t.Fatalf("work queue holds %d messages, want 1 (message 1 stays)", info.State.Msgs)
	}
	publishN(t, js, "w.a", 2, 2)

	// The restarted server reports the same.
	ts = ts.restart()
	js, err = njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	if s, err = js.Stream(ctxT(t), "W"); err != nil {
		t.Fatal(err)
	}
	if c, err = s.Consumer(ctxT(t), "p"); err != nil {
		t.Fatal(err)
	}
	if ci := consumerInfo(t, c); ci.AckFloor.Stream != 0 || ci.NumRedelivered != 1 {
		t.Fatalf("after restart: floor %d redelivered %d", ci.AckFloor.Stream, ci.NumRedelivered)
	}
	// Message 1 is not delivered again: the next is 2.
	m, seq, dc := fetchOne(t, c, 3*time.Second)
	if seq != 2 || dc != 1 {
		t.Fatalf("after restart got seq %d count %d, want 2 1", seq, dc)
	}
	if err := m.DoubleAck(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// Acking 2 leaves 1 the only pending one: it is let go and the floor
	// moves to 2; it stays counted and stays in the work queue.
	if ci := consumerInfo(t, c); ci.AckFloor.Stream != 2 || ci.NumAckPending != 0 || ci.NumRedelivered != 1 {
		t.Fatalf("after ack of 2: floor %d pending %d redelivered %d, want 2 0 1", ci.AckFloor.Stream, ci.NumAckPending, ci.NumRedelivered)
	}
	m, seq, _ = fetchOne(t, c, 3*time.Second)
	if seq != 3 {
		t.Fatalf("next: seq %d", seq)
	}
	if err := m.DoubleAck(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if info, _ := s.Info(ctxT(t)); info.State.Msgs != 1 || info.State.FirstSeq != 1 {
		t.Fatalf("work queue: %d messages from %d, want message 1 left", info.State.Msgs, info.State.FirstSeq)
	}
}

// TestCompatPullMaxBytes: a pull request's max_bytes counts each message
// as nats-server does (subject, ack reply subject, headers and payload), a
// message that does not fit ends the request with 409 Message Size Exceeds
// MaxBytes, and a request whose bytes are used up exactly just ends.
func TestCompatPullMaxBytes(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	for i := 0; i < 5; i++ {
		if _, err := js.Publish(ctxT(t), "s.a", []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	// pull sends one request and returns what came for it: the number of
	// messages, the size of the first (subject + reply + payload) and the
	// final status.
	pull := func(body string) (n, first int, status string) {
		t.Helper()
		sub, err := nc.SubscribeSync(nats.NewInbox())
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		if err := nc.PublishRequest(api.SubjConsumerNext+"S.p", sub.Subject, []byte(body)); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("%s: %v after %d messages", body, err, n)
			}
			if st := m.Header.Get("Status"); st != "" {
				return n, first, st + " " + m.Header.Get("Description")
			}
			if n == 0 {
				first = len(m.Subject) + len(m.Reply) + len(m.Data)
			}
			n++
		}
	}
	if n, _, st := pull(`{"batch":5,"max_bytes":10,"expires":1000000000}`); n != 0 || st != "409 Message Size Exceeds MaxBytes" {
		t.Fatalf("max_bytes 10: %d messages, %q", n, st)
	}
	n, size, st := pull(`{"batch":5,"max_bytes":60,"expires":1000000000}`)
	if n != 1 || st != "409 Message Size Exceeds MaxBytes" || size != 52 {
		t.Fatalf("max_bytes 60: %d messages of %d bytes, %q", n, size, st)
	}
	// Exactly two messages' worth: both come and the request ends there,
	// without a 409.
	sub, err := nc.SubscribeSync(nats.NewInbox())
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest(api.SubjConsumerNext+"S.p", sub.Subject, []byte(`{"batch":5,"max_bytes":104,"expires":30000000000}`)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil || m.Header.Get("Status") != "" {
			t.Fatalf("max_bytes 104, message %d: %v %v", i, err, m)
		}
	}
	c, err := s.Consumer(ctxT(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "request done", func() bool { return consumerInfo(t, c).NumWaiting == 0 })
	// The info reply came after anything sent to the inbox before it.
	if n, _, _ := sub.Pending(); n != 0 {
		m, _ := sub.NextMsg(0)
		t.Fatalf("max_bytes used up exactly, then: %v %q", m.Header, m.Data)
	}
}

// TestCompatUnpin: CONSUMER.UNPIN through nats.go's UnpinConsumer, with
// nats-server's checks and errors (jetwal pins no client, so unpinning a
// group the consumer has simply succeeds).
func TestCompatUnpin(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	if _, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "g", AckPolicy: njs.AckExplicitPolicy,
		PriorityGroups: []string{"A"}, PriorityPolicy: njs.PriorityPolicyPinned}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if err := s.UnpinConsumer(ctxT(t), "g", "A"); err != nil {
		t.Fatalf("unpin A: %v", err)
	}
	for _, c := range []struct {
		consumer, group string
		code            njs.ErrorCode
	}{
		{"g", "B", 10160},
		{"p", "A", 10160},
		{"nope", "A", 10014},
	} {
		if err := s.UnpinConsumer(ctxT(t), c.consumer, c.group); apiCode(err) != c.code {
			t.Errorf("unpin %s %s: %v, want %d", c.consumer, c.group, err, c.code)
		}
	}
	for body, want := range map[string]string{
		``:                              `{"code":400,"err_code":10025,"description":"invalid JSON: unexpected end of JSON input"}`,
		`{}`:                            `{"code":400,"err_code":10025,"description":"invalid JSON: consumer group not specified"}`,
		`{"group":"a b"}`:               `{"code":400,"err_code":10162,"description":"Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"}`,
		`{"group":"waytoolongname178"}`: `{"code":400,"err_code":10162,"description":"Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"}`,
	} {
		got := string(request(t, nc, "$JS.API.CONSUMER.UNPIN.S.g", body).Data)
		if want = `{"type":"io.nats.jetstream.api.v1.consumer_unpin_response","error":` + want + `}`; got != want {
			t.Errorf("unpin %q:\n got %s\nwant %s", body, got, want)
		}
	}
}
