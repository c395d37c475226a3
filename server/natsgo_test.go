package server

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// nextMsg reads one message or fails the test.
func nextMsg(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("next message on %q: %v", sub.Subject, err)
	}
	return m
}

// noMsg checks that nothing is pending on sub after a round trip through
// the server on nc.
func noMsg(t *testing.T, nc *nats.Conn, sub *nats.Subscription) {
	t.Helper()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := sub.Pending(); n != 0 {
		m, _ := sub.NextMsg(0)
		t.Fatalf("unexpected message on %q: %q", sub.Subject, m.Data)
	}
}

func TestPubSub(t *testing.T) {
	s := startServer(t, Options{})
	sc := connect(t, s)
	pc := connect(t, s)
	sub, err := sc.SubscribeSync("greet")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := pc.Publish("greet", fmt.Appendf(nil, "hello %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		m := nextMsg(t, sub)
		if want := fmt.Sprintf("hello %d", i); string(m.Data) != want {
			t.Fatalf("message %d = %q, want %q", i, m.Data, want)
		}
		if m.Subject != "greet" {
			t.Fatalf("subject %q", m.Subject)
		}
	}
	// Echo is on by default: the publisher's own subscription gets it too.
	own, _ := pc.SubscribeSync("greet")
	pc.Flush()
	pc.Publish("greet", []byte("self"))
	if m := nextMsg(t, own); string(m.Data) != "self" {
		t.Fatalf("echo got %q", m.Data)
	}
}

func TestWildcards(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	star, _ := nc.SubscribeSync("orders.*")
	tail, _ := nc.SubscribeSync("orders.>")
	all, _ := nc.SubscribeSync(">")
	mid, _ := nc.SubscribeSync("*.eu.*")
	nc.Flush()
	pub := connect(t, s)
	for _, subj := range []string{"orders.new", "orders.eu.paid", "orders", "x.eu.y"} {
		pub.Publish(subj, []byte(subj))
	}
	pub.Flush()
	expect := func(sub *nats.Subscription, want ...string) {
		t.Helper()
		for _, w := range want {
			if m := nextMsg(t, sub); m.Subject != w {
				t.Fatalf("%s got %q, want %q", sub.Subject, m.Subject, w)
			}
		}
		noMsg(t, nc, sub)
	}
	expect(star, "orders.new")
	expect(tail, "orders.new", "orders.eu.paid")
	expect(all, "orders.new", "orders.eu.paid", "orders", "x.eu.y")
	expect(mid, "orders.eu.paid", "x.eu.y")
}

func TestQueueGroups(t *testing.T) {
	s := startServer(t, Options{})
	var counts [3]atomic.Int64
	var plain atomic.Int64
	for i := range counts {
		nc := connect(t, s)
		if _, err := nc.QueueSubscribe("work", "workers", func(*nats.Msg) { counts[i].Add(1) }); err != nil {
			t.Fatal(err)
		}
		nc.Flush()
	}
	pc := connect(t, s)
	pc.Subscribe("work", func(*nats.Msg) { plain.Add(1) })
	pc.Flush()
	const n = 300
	for i := 0; i < n; i++ {
		pc.Publish("work", []byte("job"))
	}
	pc.Flush()
	total := func() int64 { return counts[0].Load() + counts[1].Load() + counts[2].Load() }
	waitFor(t, "all jobs", func() bool { return total() == n && plain.Load() == n })
	for i := range counts {
		// Random choice: the chance of a member getting nothing is (2/3)^300.
		if counts[i].Load() == 0 {
			t.Errorf("member %d got no messages: %d %d %d", i, counts[0].Load(), counts[1].Load(), counts[2].Load())
		}
	}
	// Settle, then make sure nobody got a duplicate.
	pc.Flush()
	if total() != n {
		t.Fatalf("queue group got %d messages, want exactly %d", total(), n)
	}
}

func TestRequestReply(t *testing.T) {
	s := startServer(t, Options{})
	svc := connect(t, s)
	svc.Subscribe("math.double", func(m *nats.Msg) {
		m.Respond(append(m.Data, m.Data...))
	})
	svc.Flush()
	for _, style := range []struct {
		name string
		opts []nats.Option
	}{{"muxed inbox", nil}, {"old style", []nats.Option{nats.UseOldRequestStyle()}}} {
		t.Run(style.name, func(t *testing.T) {
			nc := connect(t, s, style.opts...)
			for i := 0; i < 20; i++ {
				in := fmt.Sprintf("x%d", i)
				resp, err := nc.Request("math.double", []byte(in), 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if string(resp.Data) != in+in {
					t.Fatalf("reply %q", resp.Data)
				}
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	sub, _ := nc.SubscribeSync("h")
	nc.Flush()
	pub := connect(t, s)
	m := nats.NewMsg("h")
	m.Header.Set("Nats-Msg-Id", "article-9")
	m.Header.Add("X-Multi", "a")
	m.Header.Add("X-Multi", "b")
	m.Data = []byte("Python Context Managers")
	if err := pub.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	got := nextMsg(t, sub)
	if got.Header.Get("Nats-Msg-Id") != "article-9" || strings.Join(got.Header.Values("X-Multi"), ",") != "a,b" {
		t.Fatalf("headers %v", got.Header)
	}
	if string(got.Data) != "Python Context Managers" {
		t.Fatalf("data %q", got.Data)
	}
	// Header-only message.
	pub.PublishMsg(&nats.Msg{Subject: "h", Header: nats.Header{"K": []string{"v"}}})
	if got := nextMsg(t, sub); got.Header.Get("K") != "v" || len(got.Data) != 0 {
		t.Fatalf("header-only message: %v %q", got.Header, got.Data)
	}
}

func TestNoResponders(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	_, err := nc.Request("nobody.listens", nil, 5*time.Second)
	if !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("err = %v, want ErrNoResponders", err)
	}
	old := connect(t, s, nats.UseOldRequestStyle())
	_, err = old.Request("nobody.listens", nil, 5*time.Second)
	if !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("old style err = %v, want ErrNoResponders", err)
	}
}

func TestMaxPayloadError(t *testing.T) {
	s := startServer(t, Options{MaxPayload: 1024})
	nc := connect(t, s)
	if got := nc.MaxPayload(); got != 1024 {
		t.Fatalf("client sees max payload %d", got)
	}
	if err := nc.Publish("big", make([]byte, 1025)); !errors.Is(err, nats.ErrMaxPayload) {
		t.Fatalf("err = %v, want ErrMaxPayload", err)
	}
	if err := nc.Publish("ok", make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// A client that ignores the limit is told and cut off by the server.
	raw := dialRaw(t, s)
	raw.handshake(connectQuiet)
	raw.send("PUB big 1025\r\n")
	raw.expect("-ERR 'Maximum Payload Violation'\r\n")
	raw.expectClosed()
}

func TestUnsubscribeMax(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	sub, _ := nc.SubscribeSync("limited")
	if err := sub.AutoUnsubscribe(3); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	pub := connect(t, s)
	for i := 0; i < 10; i++ {
		pub.Publish("limited", []byte{byte('0' + i)})
	}
	pub.Flush()
	for i := 0; i < 3; i++ {
		if m := nextMsg(t, sub); m.Data[0] != byte('0'+i) {
			t.Fatalf("message %d = %q", i, m.Data)
		}
	}
	waitFor(t, "server-side removal", func() bool { return s.NumSubscriptions() == 0 })
	if _, err := sub.NextMsg(50 * time.Millisecond); err == nil {
		t.Fatal("got a fourth message")
	}
	// Explicit unsubscribe.
	sub2, _ := nc.SubscribeSync("gone")
	nc.Flush()
	sub2.Unsubscribe()
	nc.Flush()
	if s.NumSubscriptions() != 0 || s.HasInterest("gone") {
		t.Fatal("subscription still registered")
	}
}

func TestNoEcho(t *testing.T) {
	s := startServer(t, Options{})
	me := connect(t, s, nats.NoEcho())
	other := connect(t, s)
	mine, _ := me.SubscribeSync("chat")
	theirs, _ := other.SubscribeSync("chat")
	me.Flush()
	other.Flush()
	me.Publish("chat", []byte("from me"))
	if m := nextMsg(t, theirs); string(m.Data) != "from me" {
		t.Fatalf("other got %q", m.Data)
	}
	noMsg(t, me, mine)
	other.Publish("chat", []byte("from other"))
	if m := nextMsg(t, mine); string(m.Data) != "from other" {
		t.Fatalf("me got %q", m.Data)
	}
}

func TestManyConnections(t *testing.T) {
	const n = 200
	s := startServer(t, Options{})
	conns := make([]*nats.Conn, n)
	var bcast, direct atomic.Int64
	for i := range conns {
		nc := connect(t, s)
		conns[i] = nc
		nc.Subscribe("all", func(*nats.Msg) { bcast.Add(1) })
		nc.Subscribe(fmt.Sprintf("conn.%d", i), func(*nats.Msg) { direct.Add(1) })
	}
	for _, nc := range conns {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.NumClients(); got != n {
		t.Fatalf("server has %d clients, want %d", got, n)
	}
	var wg sync.WaitGroup
	for i, nc := range conns {
		wg.Add(1)
		go func(i int, nc *nats.Conn) {
			defer wg.Done()
			nc.Publish("all", []byte("hi"))
			nc.Publish(fmt.Sprintf("conn.%d", (i+1)%n), []byte("you"))
			if err := nc.Flush(); err != nil {
				t.Error(err)
			}
		}(i, nc)
	}
	wg.Wait()
	waitFor(t, "all deliveries", func() bool { return bcast.Load() == n*n && direct.Load() == n })
}

// gate blocks reads on the connections it wraps while closed.
type gate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
}

func newGate() *gate {
	g := &gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gate) set(paused bool) {
	g.mu.Lock()
	g.paused = paused
	g.mu.Unlock()
	g.cond.Broadcast()
}

func (g *gate) wait() {
	g.mu.Lock()
	for g.paused {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

type gatedConn struct {
	net.Conn
	g *gate
}

func (c gatedConn) Read(b []byte) (int, error) {
	c.g.wait()
	return c.Conn.Read(b)
}

type gatedDialer struct{ g *gate }

func (d gatedDialer) Dial(network, address string) (net.Conn, error) {
	conn, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return gatedConn{Conn: conn, g: d.g}, nil
}

// TestSlowConsumer: a subscriber that stops reading is cut off once its
// queue passes MaxPending, silently as nats-server does, so that it
// reconnects (nats.go takes an -ERR 'Slow Consumer' as final and would
// close for good), while the publisher keeps going and a fast subscriber
// on the same subject gets everything.
//
// The publisher is paced on the fast subscriber: it sends a window of
// messages and waits until the fast one has them all before the next. That
// makes "fast" true by construction: its server-side queue never holds more
// than one window (well under the 3/4 stall mark of MaxPending), however
// little CPU a loaded machine gives its reading goroutine. Unpaced bursts
// larger than MaxPending would make the in-process nats.go reader, which is
// slower per message than the server's router, a slow consumer too, and the
// server would rightly cut it off.
func TestSlowConsumer(t *testing.T) {
	const (
		maxPending = 256 << 10
		window     = 64 // messages per paced round; 64 KiB < maxPending/4*3
	)
	s := startServer(t, Options{MaxPending: maxPending})
	g := newGate()
	closed := make(chan struct{})
	reconnected := make(chan struct{}, 1)
	slow := connect(t, s, nats.SetCustomDialer(gatedDialer{g}), nats.ClosedHandler(func(*nats.Conn) { close(closed) }),
		func(o *nats.Options) error { o.AllowReconnect = true; return nil }, // connect's default is NoReconnect
		nats.ReconnectWait(10*time.Millisecond), nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}))
	if _, err := slow.Subscribe("feed", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := slow.Flush(); err != nil {
		t.Fatal(err)
	}
	fast := connect(t, s)
	var got atomic.Int64
	if _, err := fast.Subscribe("feed", func(*nats.Msg) { got.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := fast.Flush(); err != nil {
		t.Fatal(err)
	}

	g.set(true) // the slow client stops reading
	pub := connect(t, s)
	payload := bytes.Repeat([]byte("x"), 1024)
	sent := int64(0)
	round := func() {
		t.Helper()
		for i := 0; i < window; i++ {
			if err := pub.Publish("feed", payload); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		// A round trip: the publisher is never stuck behind the slow one.
		if err := pub.FlushTimeout(10 * time.Second); err != nil {
			t.Fatalf("publisher stalled after %d messages: %v", sent, err)
		}
		waitFor(t, "fast subscriber to get every message", func() bool { return got.Load() == sent })
		if fast.Status() != nats.CONNECTED {
			t.Fatalf("fast subscriber %v after %d messages: %v", fast.Status(), sent, fast.LastError())
		}
	}
	for s.SlowConsumers() == 0 {
		if sent > 200_000 {
			t.Fatalf("no slow consumer after %d messages", sent)
		}
		round()
	}
	for i := 0; i < 30; i++ { // the fast subscriber keeps receiving afterwards
		round()
	}
	if got := s.SlowConsumers(); got != 1 {
		t.Fatalf("slow consumers = %d, want 1 (only the gated client)", got)
	}
	if !s.HasInterest("feed") || s.NumClients() != 2 {
		t.Fatalf("after cut-off: interest %v, clients %d", s.HasInterest("feed"), s.NumClients())
	}

	g.set(false) // let it read what is left: then end of stream, and a reconnect
	select {
	case <-reconnected:
	case <-closed:
		t.Fatalf("slow client closed for good (last error %v): it should reconnect", slow.LastError())
	case <-time.After(15 * time.Second):
		t.Fatalf("slow client did not reconnect: status %v, last error %v, server clients %d", slow.Status(), slow.LastError(), s.NumClients())
	}
	if err := slow.LastError(); err != nil && strings.Contains(err.Error(), "Slow Consumer") {
		t.Fatalf("slow client got %v: the cut-off should be silent", err)
	}
	// Back in: its subscription was restored and it receives again.
	var again atomic.Int64
	if _, err := slow.Subscribe("feed.again", func(*nats.Msg) { again.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := slow.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish("feed.again", payload); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reconnected client to receive", func() bool { return again.Load() == 1 })
	t.Logf("cut off after %d messages of %d bytes", sent, len(payload))
}
