package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestInternalRequestReply is how the JetStream layer serves its API: an
// internal subscription on $JS.API.> answers on the request's reply inbox.
func TestInternalRequestReply(t *testing.T) {
	s := startServer(t, Options{JetStream: true})
	type seen struct {
		subject, reply, data string
		client               uint64
	}
	var mu sync.Mutex
	var got []seen
	_, err := s.Subscribe("$JS.API.>", "", func(m *Msg) {
		mu.Lock()
		got = append(got, seen{m.Subject, m.Reply, string(m.Data), m.ClientID})
		mu.Unlock()
		s.Publish(m.Reply, "", nil, []byte(`{"type":"io.nats.jetstream.api.v1.account_info_response","subject":"`+m.Subject+`"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	nc := connect(t, s)
	resp, err := nc.Request("$JS.API.INFO", []byte(`{"offset":0}`), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"io.nats.jetstream.api.v1.account_info_response","subject":"$JS.API.INFO"}`; string(resp.Data) != want {
		t.Fatalf("reply %q", resp.Data)
	}
	if resp.Header != nil {
		t.Fatalf("reply should be a plain MSG, got header %v", resp.Header)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].subject != "$JS.API.INFO" || got[0].data != `{"offset":0}` || got[0].client == 0 || got[0].reply == "" {
		t.Fatalf("handler saw %+v", got)
	}
}

func TestInternalPublishToClients(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	sub, _ := nc.SubscribeSync("events.>")
	nc.Flush()
	hdr := []byte("NATS/1.0\r\nNats-Stream: python_articles\r\nNats-Sequence: 2\r\n\r\n")
	s.Publish("events.a", "", hdr, []byte("Python Data Types"))
	s.Publish("events.b", "_INBOX.r", nil, []byte("plain"))
	s.Publish("events.c", "", []byte("NATS/1.0 404 No Messages\r\n\r\n"), nil)
	s.Publish("no..good", "", nil, []byte("dropped"))

	m := nextMsg(t, sub)
	if m.Subject != "events.a" || m.Header.Get("Nats-Sequence") != "2" || string(m.Data) != "Python Data Types" {
		t.Fatalf("first: %s %v %q", m.Subject, m.Header, m.Data)
	}
	m = nextMsg(t, sub)
	if m.Subject != "events.b" || m.Reply != "_INBOX.r" || m.Header != nil || string(m.Data) != "plain" {
		t.Fatalf("second: %s %s %v %q", m.Subject, m.Reply, m.Header, m.Data)
	}
	m = nextMsg(t, sub)
	if m.Header.Get("Status") != "404" || m.Header.Get("Description") != "No Messages" || len(m.Data) != 0 {
		t.Fatalf("status message: %v %q", m.Header, m.Data)
	}
	noMsg(t, nc, sub)
}

func TestInternalToInternalAndQueues(t *testing.T) {
	s := startServer(t, Options{})
	var a, b, plain atomic.Int64
	var data bytes.Buffer
	var mu sync.Mutex
	s.Subscribe("jobs", "workers", func(*Msg) { a.Add(1) })
	s.Subscribe("jobs", "workers", func(*Msg) { b.Add(1) })
	s.Subscribe("jobs", "", func(m *Msg) {
		mu.Lock()
		data.Write(m.Data) // copy: the slice is only valid during the call
		mu.Unlock()
		plain.Add(1)
	})
	nc := connect(t, s)
	var tcp atomic.Int64
	nc.QueueSubscribe("jobs", "workers", func(*nats.Msg) { tcp.Add(1) })
	nc.Flush()
	for i := 0; i < 90; i++ {
		s.Publish("jobs", "", nil, []byte("j"))
		nc.Publish("jobs", []byte("k"))
	}
	nc.Flush()
	waitFor(t, "deliveries", func() bool { return a.Load()+b.Load()+tcp.Load() == 180 && plain.Load() == 180 })
	mu.Lock()
	defer mu.Unlock()
	if bytes.Count(data.Bytes(), []byte("j")) != 90 || bytes.Count(data.Bytes(), []byte("k")) != 90 {
		t.Fatalf("plain internal sub saw %q", data.String())
	}
}

func TestInterestHookAndHasInterest(t *testing.T) {
	s := startServer(t, Options{})
	var calls atomic.Int64
	s.SetInterestHook(func() { calls.Add(1) })
	if s.HasInterest("push.deliver") {
		t.Fatal("interest before any subscription")
	}
	nc := connect(t, s)
	sub, _ := nc.SubscribeSync("push.*")
	nc.Flush()
	if !s.HasInterest("push.deliver") {
		t.Fatal("no interest after SUB")
	}
	after := calls.Load()
	if after < 1 {
		t.Fatal("hook not called for SUB")
	}
	sub.Unsubscribe()
	nc.Flush()
	if s.HasInterest("push.deliver") {
		t.Fatal("interest after UNSUB")
	}
	if calls.Load() <= after {
		t.Fatal("hook not called for UNSUB")
	}
	nc.SubscribeSync("push.x")
	nc.Flush()
	before := calls.Load()
	nc.Close()
	waitFor(t, "hook after close", func() bool { return calls.Load() > before })
	waitFor(t, "interest gone after close", func() bool { return !s.HasInterest("push.x") })

	isub, err := s.Subscribe("internal.x", "", func(*Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasInterest("internal.x") {
		t.Fatal("internal subscription not visible")
	}
	isub.Unsubscribe()
	isub.Unsubscribe() // twice is fine
	if s.HasInterest("internal.x") {
		t.Fatal("internal subscription still there")
	}
	s.SetInterestHook(nil)
}

func TestSubscribeErrors(t *testing.T) {
	s := startServer(t, Options{})
	for _, subj := range []string{"", "a..b", "a.>.b", "a b"} {
		if _, err := s.Subscribe(subj, "", func(*Msg) {}); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("Subscribe(%q) = %v", subj, err)
		}
	}
	if _, err := s.Subscribe("ok", "", nil); err == nil {
		t.Error("nil handler accepted")
	}
}

func TestShutdown(t *testing.T) {
	s, err := New(Options{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	var order []string
	s.OnShutdown(func() { order = append(order, "first") })
	s.OnShutdown(func() { order = append(order, "second") })
	closed := make(chan struct{})
	nc, err := nats.Connect(s.ClientURL(), nats.NoReconnect(), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("client not disconnected by shutdown")
	}
	if len(order) != 2 || order[0] != "first" || order[1] != "second" {
		t.Fatalf("hooks ran as %v", order)
	}
	if s.NumClients() != 0 {
		t.Fatalf("%d clients after shutdown", s.NumClients())
	}
	if _, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		t.Fatal("still accepting after shutdown")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
	if err := s.Start(); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Start after Shutdown = %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	bad := []Options{{Port: 70000}, {MaxPayload: -1}, {MaxConnections: -1}, {MaxPending: -5}, {PingInterval: -time.Second}}
	for _, o := range bad {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options()
	if o.MaxPayload != DefaultMaxPayload || o.MaxControlLine != 4096 || o.MaxPending != 64<<20 ||
		o.PingInterval != 2*time.Minute || o.MaxPingsOut != 2 || o.Host != "0.0.0.0" || o.MaxConnections != 64*1024 {
		t.Fatalf("defaults: %+v", o)
	}
}

// feedClient runs input through a client's parser without a socket.
func feedClient(t testing.TB, c *client, in []byte) {
	for len(in) > 0 {
		space := c.in.space()
		n := copy(space, in)
		in = in[n:]
		c.in.commit(n, len(space))
		c.processInput(c.limits())
		if c.closed.Load() {
			t.Fatalf("client closed while feeding %q", in)
		}
	}
}

// TestPublishPathAllocatesNothing: parsing PUB/HPUB, matching and framing
// MSG/HMSG into a subscriber's queue allocate nothing once warm.
func TestPublishPathAllocatesNothing(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := net.Pipe()
	b, _ := net.Pipe()
	pub := newClient(s, a, 1)
	sub := newClient(s, b, 2)
	feedClient(t, sub, []byte("CONNECT {\"verbose\":false,\"protocol\":1,\"headers\":true}\r\nSUB bench.> 1\r\nSUB bench.x q 2\r\n"))
	feedClient(t, pub, []byte("CONNECT {\"verbose\":false,\"protocol\":1,\"headers\":true}\r\n"))
	var chunk []byte
	for i := 0; i < 50; i++ {
		chunk = append(chunk, "PUB bench.x reply.to 128\r\n"...)
		chunk = append(chunk, bytes.Repeat([]byte("p"), 128)...)
		chunk = append(chunk, "\r\nHPUB bench.y 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"...)
	}
	run := func() {
		feedClient(t, pub, chunk)
		pub.flushPending()
		resetQueue(sub)
		select {
		case <-sub.out.kick:
		default:
		}
	}
	run()
	if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
		t.Fatalf("publish path allocates %.1f times per chunk of 100 messages, want 0", allocs)
	}
	// And the subscriber really got the messages.
	feedClient(t, pub, chunk[:len("PUB bench.x reply.to 128\r\n")+130])
	pub.flushPending()
	got := queuedString(sub)
	if want := "MSG bench.x 1 reply.to 128\r\n"; got[:len(want)] != want {
		t.Fatalf("queued %q", got)
	}
	if n := bytes.Count([]byte(got), []byte("MSG bench.x")); n != 2 {
		t.Fatalf("queued %d copies, want 2 (plain + queue member)", n)
	}
}

// TestAckSubjectsBypassTheCache: acks ($JS.ACK.…) and flow-control replies
// are published once each, so they are delivered without entering the
// subject cache, while a repeating subject is cached.
func TestAckSubjectsBypassTheCache(t *testing.T) {
	s := startServer(t, Options{})
	got := make(chan string, 300)
	if _, err := s.Subscribe("$JS.ACK.>", "", func(m *Msg) { got <- m.Subject }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe("orders.*", "", func(*Msg) {}); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, s)
	for i := range 200 {
		nc.Publish(fmt.Sprintf("$JS.ACK.S.C.1.%d.%d.0.0", i, i), nil)
	}
	nc.Publish("orders.new", nil)
	nc.Flush()
	for range 200 {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("an ack was not delivered")
		}
	}
	if n := s.gacc.subs.CacheLen(); n != 1 {
		t.Fatalf("subject cache holds %d entries after 200 acks and one repeating subject, want 1", n)
	}
}
