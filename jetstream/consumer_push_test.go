package jetstream

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestConsumerPushLegacyClient drives push consumers through nats.go's
// older JetStream API: an ordered consumer (push, flow control, idle
// heartbeats), a queue subscription (deliver group) and flow control with
// messages larger than the flow control window.
func TestConsumerPushLegacyClient(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "EVENTS", Subjects: []string{"ev.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		if _, err := js.Publish("ev.a", []byte(fmt.Sprintf("e-%d", i))); err != nil {
			t.Fatal(err)
		}
	}

	// Ordered push consumer.
	got := make(chan *nats.Msg, 100)
	sub, err := js.ChanSubscribe("ev.>", got, nats.OrderedConsumer(), nats.IdleHeartbeat(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		select {
		case m := <-got:
			if string(m.Data) != fmt.Sprintf("e-%d", i) {
				t.Fatalf("ordered %d: %q", i, m.Data)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ordered push %d missing", i)
		}
	}
	sub.Unsubscribe()

	// Deliver group: two queue members share the messages, each once.
	var n1, n2 atomic.Int64
	q1, err := js.QueueSubscribe("ev.>", "workers", func(m *nats.Msg) { n1.Add(1); m.Ack() }, nats.Durable("workers"), nats.ManualAck())
	if err != nil {
		t.Fatal(err)
	}
	q2, err := js.QueueSubscribe("ev.>", "workers", func(m *nats.Msg) { n2.Add(1); m.Ack() }, nats.Durable("workers"), nats.ManualAck())
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "20 delivered to the group", func() bool { return n1.Load()+n2.Load() == 20 })
	time.Sleep(100 * time.Millisecond)
	if n1.Load()+n2.Load() != 20 {
		t.Fatalf("group got %d+%d", n1.Load(), n2.Load())
	}
	q1.Unsubscribe()
	q2.Unsubscribe()

	// Flow control: 40 messages of 100 kB cross several windows; the
	// client answers the requests and everything arrives.
	big := make([]byte, 100_000)
	for i := 0; i < 40; i++ {
		if _, err := js.Publish("ev.big", big); err != nil {
			t.Fatal(err)
		}
	}
	var bigN atomic.Int64
	fc, err := js.Subscribe("ev.big", func(m *nats.Msg) { bigN.Add(1) }, nats.EnableFlowControl(),
		nats.IdleHeartbeat(time.Second), nats.AckNone(), nats.DeliverAll())
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "40 big messages", func() bool { return bigN.Load() == 40 })
	fc.Unsubscribe()

	// Idle heartbeats reach a plain subscriber of the deliver subject.
	hb, _ := nc.SubscribeSync("hb.deliver")
	if _, err := js.AddConsumer("EVENTS", &nats.ConsumerConfig{Durable: "hb", DeliverSubject: "hb.deliver",
		DeliverPolicy: nats.DeliverNewPolicy, AckPolicy: nats.AckNonePolicy, Heartbeat: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	m, err := hb.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get("Status") != "100" || m.Header.Get("Description") != "Idle Heartbeat" ||
		m.Header.Get("Nats-Last-Consumer") != "0" || m.Header.Get("Nats-Last-Stream") != "60" {
		t.Fatalf("heartbeat: %v", m.Header)
	}
}

// TestConsumerPushFirstHeartbeatAfterInterval: the first idle heartbeat of a
// push consumer comes one interval after its creation, as with nats-server,
// not at once (nats.py counts an immediate one as a delivery, so watching
// an empty KV bucket never finished).
func TestConsumerPushFirstHeartbeatAfterInterval(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "EMPTY", Subjects: []string{"empty.>"}}); err != nil {
		t.Fatal(err)
	}
	sub, err := nc.SubscribeSync("hb.first")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	const hb = 2 * time.Second
	created := time.Now()
	if _, err := js.AddConsumer("EMPTY", &nats.ConsumerConfig{DeliverSubject: "hb.first",
		AckPolicy: nats.AckNonePolicy, Heartbeat: hb}); err != nil {
		t.Fatal(err)
	}
	// Nothing within half the interval (the old code sent one at once).
	if m, err := sub.NextMsg(hb / 2); err == nil {
		t.Fatalf("got %v %q %s after creation; want nothing before the interval", m.Header, m.Data, time.Since(created))
	}
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no heartbeat: %v", err)
	}
	if since := time.Since(created); since < hb {
		t.Fatalf("first heartbeat %s after creation, before the %s interval", since, hb)
	}
	if m.Header.Get("Status") != "100" || m.Header.Get("Description") != "Idle Heartbeat" {
		t.Fatalf("not a heartbeat: %v", m.Header)
	}
}
