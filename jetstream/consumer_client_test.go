package jetstream

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// The tests in this file drive consumers through the nats.go jetstream
// client, once per storage type.

func consumerStream(t *testing.T, js njs.JetStream, storage njs.StorageType, cfg njs.StreamConfig) njs.Stream {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "ORDERS"
	}
	if len(cfg.Subjects) == 0 {
		cfg.Subjects = []string{"orders.>"}
	}
	cfg.Storage = storage
	s, err := js.CreateStream(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func publishN(t *testing.T, js njs.JetStream, subj string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := js.Publish(ctxT(t), subj, []byte(fmt.Sprintf("msg-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
}

func fetchAll(t *testing.T, c njs.Consumer, n int, wait time.Duration) []njs.Msg {
	t.Helper()
	b, err := c.Fetch(n, njs.FetchMaxWait(wait))
	if err != nil {
		t.Fatal(err)
	}
	var out []njs.Msg
	for m := range b.Messages() {
		out = append(out, m)
	}
	if b.Error() != nil && !errors.Is(b.Error(), njs.ErrNoMessages) {
		t.Fatalf("fetch: %v", b.Error())
	}
	return out
}

func consumerInfo(t *testing.T, c njs.Consumer) *njs.ConsumerInfo {
	t.Helper()
	ci, err := c.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return ci
}

func TestConsumerFetchAndAck(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.new", 1, 10)
		c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "worker", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		ci := consumerInfo(t, c)
		if ci.NumPending != 10 || ci.Config.AckWait != 30*time.Second || ci.Config.MaxAckPending != 1000 ||
			ci.Config.MaxWaiting != 512 || ci.Config.MaxDeliver != -1 {
			t.Fatalf("fresh consumer info: %+v", ci)
		}
		msgs := fetchAll(t, c, 5, 2*time.Second)
		if len(msgs) != 5 {
			t.Fatalf("fetched %d", len(msgs))
		}
		for i, m := range msgs {
			md, _ := m.Metadata()
			if string(m.Data()) != fmt.Sprintf("msg-%d", i+1) || md.Sequence.Stream != uint64(i+1) ||
				md.Sequence.Consumer != uint64(i+1) || md.NumDelivered != 1 || md.NumPending != uint64(9-i) {
				t.Fatalf("msg %d: %q %+v", i, m.Data(), md)
			}
		}
		ci = consumerInfo(t, c)
		if ci.NumAckPending != 5 || ci.NumPending != 5 || ci.Delivered.Stream != 5 || ci.AckFloor.Stream != 0 {
			t.Fatalf("after fetch: %+v", ci)
		}
		for _, m := range msgs {
			if err := m.DoubleAck(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		ci = consumerInfo(t, c)
		if ci.NumAckPending != 0 || ci.AckFloor.Stream != 5 || ci.AckFloor.Consumer != 5 {
			t.Fatalf("after ack: %+v", ci)
		}
		b, err := c.FetchNoWait(10)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range b.Messages() {
			n++
			m.Ack()
		}
		if n != 5 {
			t.Fatalf("no wait fetch got %d", n)
		}
		if msgs := fetchAll(t, c, 3, 300*time.Millisecond); len(msgs) != 0 {
			t.Fatalf("empty fetch got %d", len(msgs))
		}
		// A pull waiting for a message is woken by the publish.
		done := make(chan int)
		go func() {
			b, err := c.Fetch(1, njs.FetchMaxWait(10*time.Second))
			n := 0
			if err == nil {
				for range b.Messages() {
					n++
				}
			}
			done <- n
		}()
		eventually(t, "waiting pull", func() bool { return consumerInfo(t, c).NumWaiting == 1 })
		publishN(t, js, "orders.new", 11, 1)
		select {
		case n := <-done:
			if n != 1 {
				t.Fatalf("woken fetch got %d", n)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("waiting pull not woken by a publish")
		}
	})
}

// TestConsumerConsumeAndMessages uses a short pull expiry and heartbeat:
// nats.go v1.55 skips its re-pull when the goroutine that sent the previous
// pull request has not yet cleared fetchInProgress (pull.go checkPending).
// If the server has answered that request completely by then, no pull is
// outstanding and the client recovers only after two missed heartbeats -
// 30 s with the defaults, 1 s here. The race is the client's; it shows on a
// loaded machine whatever the server.
func TestConsumerConsumeAndMessages(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.a", 1, 50)
		c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "cons", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		var got atomic.Int64
		cc, err := c.Consume(func(m njs.Msg) {
			m.Ack()
			got.Add(1)
		}, njs.PullMaxMessages(20), njs.PullExpiry(2*time.Second), njs.PullHeartbeat(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "50 consumed", func() bool { return got.Load() == 50 })
		publishN(t, js, "orders.b", 51, 50)
		eventually(t, "100 consumed", func() bool { return got.Load() == 100 })
		cc.Stop()
		eventually(t, "all acked", func() bool {
			ci := consumerInfo(t, c)
			return ci.NumAckPending == 0 && ci.AckFloor.Stream == 100 && ci.NumPending == 0
		})

		c2, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Name: "iter", AckPolicy: njs.AckExplicitPolicy,
			FilterSubject: "orders.b"})
		if err != nil {
			t.Fatal(err)
		}
		it, err := c2.Messages(njs.PullMaxMessages(7), njs.PullExpiry(2*time.Second), njs.PullHeartbeat(500*time.Millisecond),
			njs.WithMessagesErrOnMissingHeartbeat(false))
		if err != nil {
			t.Fatal(err)
		}
		for i := 51; i <= 100; i++ {
			m, err := it.Next()
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if string(m.Data()) != fmt.Sprintf("msg-%d", i) || m.Subject() != "orders.b" {
				t.Fatalf("iter %d: %s %q", i, m.Subject(), m.Data())
			}
			m.Ack()
		}
		it.Stop()
	})
}

func TestConsumerOrdered(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.x", 1, 30)
		oc, err := s.OrderedConsumer(ctxT(t), njs.OrderedConsumerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		it, err := oc.Messages()
		if err != nil {
			t.Fatal(err)
		}
		defer it.Stop()
		for i := 1; i <= 40; i++ {
			if i == 31 {
				publishN(t, js, "orders.y", 31, 10)
			}
			m, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if string(m.Data()) != fmt.Sprintf("msg-%d", i) {
				t.Fatalf("ordered %d: %q", i, m.Data())
			}
		}
		// Fetch on an ordered consumer as well.
		oc2, err := s.OrderedConsumer(ctxT(t), njs.OrderedConsumerConfig{FilterSubjects: []string{"orders.y"}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := oc2.Fetch(20, njs.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range b.Messages() {
			n++
		}
		if n != 10 {
			t.Fatalf("ordered fetch got %d", n)
		}
	})
}

func TestConsumerRedeliveryNakTerm(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.a", 1, 3)
		c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "r", AckPolicy: njs.AckExplicitPolicy,
			AckWait: 300 * time.Millisecond, MaxDeliver: 3})
		if err != nil {
			t.Fatal(err)
		}
		// Ack wait: message 1 is not acked and comes again with tries 2, then 3, then never.
		msgs := fetchAll(t, c, 1, time.Second)
		if len(msgs) != 1 || string(msgs[0].Data()) != "msg-1" {
			t.Fatalf("first: %v", msgs)
		}
		start, last := time.Now(), time.Now()
		var deliveries []uint64
		// Until a third redelivery, or two ack waits passed quietly after
		// the second (max deliver reached), or a generous deadline.
		for time.Since(start) < 10*time.Second && len(deliveries) < 3 &&
			(len(deliveries) < 2 || time.Since(last) < 700*time.Millisecond) {
			for _, m := range fetchAll(t, c, 1, 300*time.Millisecond) {
				md, _ := m.Metadata()
				if md.Sequence.Stream == 1 {
					deliveries = append(deliveries, md.NumDelivered)
					last = time.Now()
				} else {
					// Nak msg 2 with a delay, term msg 3.
					if md.Sequence.Stream == 2 && md.NumDelivered == 1 {
						m.NakWithDelay(time.Hour)
					} else {
						m.Term()
					}
				}
			}
		}
		if len(deliveries) != 2 || deliveries[0] != 2 || deliveries[1] != 3 {
			t.Fatalf("redeliveries of msg 1: %v", deliveries)
		}
		ci := consumerInfo(t, c)
		// msg 1 went past max deliver, msg 3 terminated, msg 2 waits for its nak delay.
		if ci.NumAckPending != 1 || ci.Delivered.Stream != 3 {
			t.Fatalf("info: %+v", ci)
		}

		// Nak with a short delay comes back after the delay, not before.
		c2, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "n", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		m := fetchAll(t, c2, 1, time.Second)[0]
		nakAt := time.Now()
		m.NakWithDelay(700 * time.Millisecond)
		for {
			got := fetchAll(t, c2, 1, 2*time.Second)
			if len(got) == 0 {
				t.Fatal("nak'ed message not redelivered")
			}
			md, _ := got[0].Metadata()
			if md.Sequence.Stream == 1 {
				if since := time.Since(nakAt); since < 600*time.Millisecond {
					t.Fatalf("redelivered %v after a 700ms nak", since)
				}
				if md.NumDelivered != 2 {
					t.Fatalf("tries %d", md.NumDelivered)
				}
				m = got[0]
				break
			}
			got[0].Ack()
		}
		// A plain nak redelivers at once.
		m.Nak()
		again := fetchAll(t, c2, 1, time.Second)
		if len(again) != 1 {
			t.Fatal("nak: no redelivery")
		}
		if md, _ := again[0].Metadata(); md.NumDelivered < 2 {
			t.Fatalf("nak redelivery tries %d", md.NumDelivered)
		}
		// In progress pushes the ack deadline out.
		c3, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy,
			AckWait: 400 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		m = fetchAll(t, c3, 1, time.Second)[0]
		for i := 0; i < 4; i++ {
			time.Sleep(200 * time.Millisecond)
			m.InProgress()
		}
		if md, _ := fetchAll(t, c3, 1, 200*time.Millisecond)[0].Metadata(); md.Sequence.Stream != 2 {
			t.Fatalf("in progress message was redelivered: %+v", md)
		}
	})
}

func TestConsumerMaxAckPendingAndAckAll(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.a", 1, 10)
		c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "m", AckPolicy: njs.AckExplicitPolicy, MaxAckPending: 3})
		if err != nil {
			t.Fatal(err)
		}
		msgs := fetchAll(t, c, 10, 500*time.Millisecond)
		if len(msgs) != 3 {
			t.Fatalf("max ack pending 3 gave %d", len(msgs))
		}
		msgs[0].Ack()
		if more := fetchAll(t, c, 10, 500*time.Millisecond); len(more) != 1 {
			t.Fatalf("after one ack got %d", len(more))
		}

		a, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "all", AckPolicy: njs.AckAllPolicy})
		if err != nil {
			t.Fatal(err)
		}
		msgs = fetchAll(t, a, 5, time.Second)
		if len(msgs) != 5 {
			t.Fatalf("ack all fetch %d", len(msgs))
		}
		if err := msgs[2].DoubleAck(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		ci := consumerInfo(t, a)
		if ci.NumAckPending != 2 || ci.AckFloor.Stream != 3 || ci.AckFloor.Consumer != 3 {
			t.Fatalf("ack all: %+v", ci)
		}
	})
}

func TestConsumerDeliverPolicies(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.a", 1, 3)
		publishN(t, js, "orders.b", 4, 2)
		publishN(t, js, "orders.a", 6, 1)
		mid := time.Now()
		time.Sleep(20 * time.Millisecond)
		publishN(t, js, "orders.c", 7, 1)
		first := func(cfg njs.ConsumerConfig) []string {
			t.Helper()
			cfg.AckPolicy = njs.AckNonePolicy
			c, err := s.CreateOrUpdateConsumer(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			// no_wait: everything there is, then 404 (no waiting out a timeout).
			b, err := c.FetchNoWait(10)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for m := range b.Messages() {
				out = append(out, string(m.Data()))
			}
			if b.Error() != nil && !errors.Is(b.Error(), njs.ErrNoMessages) {
				t.Fatalf("fetch: %v", b.Error())
			}
			return out
		}
		check := func(name string, got []string, want ...string) {
			t.Helper()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: got %v want %v", name, got, want)
			}
		}
		check("last", first(njs.ConsumerConfig{DeliverPolicy: njs.DeliverLastPolicy}), "msg-7")
		check("last filtered", first(njs.ConsumerConfig{DeliverPolicy: njs.DeliverLastPolicy, FilterSubject: "orders.b"}), "msg-5")
		check("new", first(njs.ConsumerConfig{DeliverPolicy: njs.DeliverNewPolicy}))
		check("by seq", first(njs.ConsumerConfig{DeliverPolicy: njs.DeliverByStartSequencePolicy, OptStartSeq: 5}), "msg-5", "msg-6", "msg-7")
		check("by time", first(njs.ConsumerConfig{DeliverPolicy: njs.DeliverByStartTimePolicy, OptStartTime: &mid}), "msg-7")
		// nats-server requires a filter with last_per_subject.
		check("last per subject", first(njs.ConsumerConfig{DeliverPolicy: njs.DeliverLastPerSubjectPolicy, FilterSubject: "orders.>"}), "msg-5", "msg-6", "msg-7")
		check("filters", first(njs.ConsumerConfig{FilterSubjects: []string{"orders.b", "orders.c"}}), "msg-4", "msg-5", "msg-7")

		c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Name: "hdrs", HeadersOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		m := fetchAll(t, c, 1, time.Second)[0]
		if len(m.Data()) != 0 || m.Headers().Get("Nats-Msg-Size") != "5" {
			t.Fatalf("headers only: %q %v", m.Data(), m.Headers())
		}
	})
}

func TestConsumerRetention(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		wq := consumerStream(t, js, storage, njs.StreamConfig{Name: "WQ", Subjects: []string{"jobs.>"}, Retention: njs.WorkQueuePolicy})
		a, err := wq.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "a", AckPolicy: njs.AckExplicitPolicy, FilterSubject: "jobs.a.>"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = wq.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "b", AckPolicy: njs.AckExplicitPolicy, FilterSubject: "jobs.>"})
		if code := apiCode(err); code != 10100 {
			t.Fatalf("overlapping work queue consumer: %v (code %d)", err, code)
		}
		if _, err := wq.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "b", AckPolicy: njs.AckExplicitPolicy, FilterSubject: "jobs.b"}); err != nil {
			t.Fatal(err)
		}
		publishN(t, js, "jobs.a.1", 1, 4)
		msgs := fetchAll(t, a, 4, time.Second)
		if len(msgs) != 4 {
			t.Fatalf("wq fetch %d", len(msgs))
		}
		msgs[0].DoubleAck(ctxT(t))
		msgs[1].DoubleAck(ctxT(t))
		eventually(t, "work queue removal", func() bool {
			info, _ := wq.Info(ctxT(t))
			return info.State.Msgs == 2 && info.State.Consumers == 2
		})

		is := consumerStream(t, js, storage, njs.StreamConfig{Name: "INT", Subjects: []string{"int.>"}, Retention: njs.InterestPolicy})
		c1, _ := is.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "c1", AckPolicy: njs.AckExplicitPolicy})
		c2, _ := is.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "c2", AckPolicy: njs.AckExplicitPolicy, FilterSubject: "int.x"})
		publishN(t, js, "int.x", 1, 2)
		publishN(t, js, "int.y", 3, 1)
		for _, m := range fetchAll(t, c1, 3, time.Second) {
			m.DoubleAck(ctxT(t))
		}
		eventually(t, "int.y removed", func() bool {
			info, _ := is.Info(ctxT(t))
			return info.State.Msgs == 2
		})
		for _, m := range fetchAll(t, c2, 2, time.Second) {
			m.DoubleAck(ctxT(t))
		}
		eventually(t, "all removed", func() bool {
			info, _ := is.Info(ctxT(t))
			return info.State.Msgs == 0
		})
	})
}

func TestConsumerPush(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.a", 1, 5)
		nc := ts.connect()
		// Nobody listens yet: nothing is delivered.
		c, err := s.CreateOrUpdatePushConsumer(ctxT(t), njs.ConsumerConfig{Durable: "push", DeliverSubject: "deliver.here",
			AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if info, err := c.Info(ctxT(t)); err != nil || info.Delivered.Stream != 0 || info.PushBound {
			t.Fatalf("delivered without interest: %+v", info)
		}
		got := make(chan *nats.Msg, 100)
		sub, err := nc.ChanSubscribe("deliver.here", got)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 5; i++ {
			select {
			case m := <-got:
				if string(m.Data) != fmt.Sprintf("msg-%d", i) {
					t.Fatalf("push %d: %q", i, m.Data)
				}
				m.Ack()
			case <-time.After(5 * time.Second):
				t.Fatalf("push message %d not delivered", i)
			}
		}
		publishN(t, js, "orders.a", 6, 1)
		select {
		case m := <-got:
			if string(m.Data) != "msg-6" {
				t.Fatalf("live push: %q", m.Data)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("live push not delivered")
		}
		sub.Unsubscribe()

		// An ephemeral push consumer goes once its subscriber is gone.
		_, err = s.CreateOrUpdatePushConsumer(ctxT(t), njs.ConsumerConfig{Name: "eph", DeliverSubject: "deliver.eph",
			InactiveThreshold: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "ephemeral consumer removed", func() bool {
			_, err := js.Consumer(ctxT(t), "ORDERS", "eph")
			return errors.Is(err, njs.ErrConsumerNotFound)
		})
	})
}

func TestConsumerDurableRestart(t *testing.T) {
	ts := startServer(t, fastSync())
	js, _ := njs.New(ts.connect())
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{})
	publishN(t, js, "orders.a", 1, 10)
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "d", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fetchAll(t, c, 6, time.Second)
	for _, m := range msgs[:4] {
		m.DoubleAck(ctxT(t))
	}
	before := consumerInfo(t, c)
	ts = ts.restart()
	js, _ = njs.New(ts.connect())
	c, err = js.Consumer(ctxT(t), "ORDERS", "d")
	if err != nil {
		t.Fatal(err)
	}
	after := consumerInfo(t, c)
	if after.Delivered.Stream != before.Delivered.Stream || after.Delivered.Consumer != before.Delivered.Consumer ||
		after.AckFloor != before.AckFloor && (after.AckFloor.Stream != 4 || after.AckFloor.Consumer != 4) ||
		after.NumAckPending != 2 || after.NumPending != 4 || !after.Created.Equal(before.Created) {
		t.Fatalf("after restart\n got %+v\nwant %+v", after, before)
	}
	rest := fetchAll(t, c, 10, time.Second)
	if len(rest) != 4 || string(rest[0].Data()) != "msg-7" {
		t.Fatalf("resumed at %d msgs", len(rest))
	}
}

func TestConsumerPurgeAndStreamDelete(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		s := consumerStream(t, js, storage, njs.StreamConfig{})
		publishN(t, js, "orders.a", 1, 8)
		c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		if got := fetchAll(t, c, 5, time.Second); len(got) != 5 {
			t.Fatalf("fetched %d", len(got))
		}
		if err := s.Purge(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		ci := consumerInfo(t, c)
		// As nats-server: the purged-to sequence, with the consumer
		// sequences where they were.
		if ci.NumAckPending != 0 || ci.NumPending != 0 || ci.AckFloor.Stream != 8 || ci.Delivered.Stream != 8 ||
			ci.AckFloor.Consumer != 5 || ci.Delivered.Consumer != 5 {
			t.Fatalf("after purge: %+v", ci)
		}
		publishN(t, js, "orders.a", 9, 1)
		if got := fetchAll(t, c, 5, 500*time.Millisecond); len(got) != 1 || string(got[0].Data()) != "msg-9" {
			t.Fatalf("after purge fetched %d", len(got))
		}
		if err := js.DeleteStream(ctxT(t), "ORDERS"); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Consumer(ctxT(t), "ORDERS", "p"); !errors.Is(err, njs.ErrStreamNotFound) {
			t.Fatalf("consumer of a deleted stream: %v", err)
		}
	})
}
