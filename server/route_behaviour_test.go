package server

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestRouteQueueGroupAcrossCluster: queue subscribers of one group on three
// servers share the messages: each message reaches exactly one member in
// the whole cluster, and plain subscribers on every server get every
// message exactly once (no loops in the full mesh).
func TestRouteQueueGroupAcrossCluster(t *testing.T) {
	s := startMesh(t, 3)
	var members []chan *nats.Msg
	var plains []chan *nats.Msg
	for _, srv := range s {
		nc := connect(t, srv)
		ch, _ := collect(t, nc, "work.*", "workers")
		members = append(members, ch)
		p, _ := collect(t, nc, "work.>", "")
		plains = append(plains, p)
	}
	// Each server knows the other two servers' plain and queue interest.
	for _, srv := range s {
		waitRemoteInterest(t, srv, 4)
	}
	pub := connect(t, s[0])
	const n = 300
	for i := 0; i < n; i++ {
		if err := pub.Publish(fmt.Sprintf("work.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, p := range plains {
		for j := 0; j < n; j++ {
			recv(t, p)
		}
		select {
		case m := <-p:
			t.Fatalf("server %d's plain subscriber got %s a second time", i, m.Subject)
		case <-time.After(200 * time.Millisecond):
		}
	}
	seen := map[string]int{}
	total := 0
	waitFor(t, "every queued message delivered", func() bool {
		for _, ch := range members {
			for {
				select {
				case m := <-ch:
					seen[m.Subject]++
					total++
					continue
				default:
				}
				break
			}
		}
		return total >= n
	})
	time.Sleep(200 * time.Millisecond) // let any duplicate arrive
	for _, ch := range members {
		total += len(ch)
	}
	if total != n || len(seen) != n {
		t.Fatalf("queue group got %d deliveries of %d distinct messages, want %d each once", total, len(seen), n)
	}
}

// TestRouteInterestFollowsSubscriptions: an unsubscribe and a client's
// disconnect withdraw the interest on the other servers, and messages stop
// crossing; request/reply works across servers.
func TestRouteInterestFollowsSubscriptions(t *testing.T) {
	s := startMesh(t, 2)
	a, b := connect(t, s[0]), connect(t, s[1])
	ch, sub := collect(t, b, "only.here", "")
	waitFor(t, "interest on s0", func() bool { return hasRemoteInterest(s[0], "only.here") })
	if err := a.Publish("only.here", []byte("1")); err != nil {
		t.Fatal(err)
	}
	recv(t, ch)
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "interest withdrawn", func() bool { return !hasRemoteInterest(s[0], "only.here") })

	c := connect(t, s[1])
	collect(t, c, "gone.soon", "")
	waitFor(t, "interest of c", func() bool { return hasRemoteInterest(s[0], "gone.soon") })
	c.Close()
	waitFor(t, "interest of a closed client withdrawn", func() bool { return !hasRemoteInterest(s[0], "gone.soon") })

	// Request/reply across the route: the reply inbox's interest travels too.
	if _, err := b.Subscribe("svc.echo", func(m *nats.Msg) { m.Respond(append([]byte("echo:"), m.Data...)) }); err != nil {
		t.Fatal(err)
	}
	b.Flush()
	waitFor(t, "service interest", func() bool { return hasRemoteInterest(s[0], "svc.echo") })
	r, err := a.Request("svc.echo", []byte("hi"), 10*time.Second)
	if err != nil {
		t.Fatalf("request across the route: %v", err)
	}
	if string(r.Data) != "echo:hi" {
		t.Fatalf("reply %q", r.Data)
	}
}

// TestRouteClientFailover: a client that knows only one server learns the
// others from connect_urls in INFO and reconnects to one of them when its
// server shuts down; messages then flow through the remaining cluster.
func TestRouteClientFailover(t *testing.T) {
	s := startMesh(t, 3)
	reconnected := make(chan struct{}, 1)
	nc, err := nats.Connect(s[1].ClientURL(), nats.ReconnectWait(50*time.Millisecond), nats.MaxReconnects(-1),
		nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	waitFor(t, "connect_urls of the other servers", func() bool { return len(nc.DiscoveredServers()) == 2 })
	shutdown(t, s[1])
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("the client did not reconnect to another server")
	}
	if u := nc.ConnectedUrl(); strings.Contains(u, s[1].ClientURL()[len("nats://"):]) {
		t.Fatalf("reconnected to the server that shut down: %s", u)
	}
	other := connect(t, s[0])
	if u := nc.ConnectedUrl(); strings.HasSuffix(u, s[0].ClientURL()[len("nats://"):]) {
		other = connect(t, s[2])
	}
	ch, _ := collect(t, nc, "after.failover", "")
	waitFor(t, "interest after failover", func() bool {
		return hasRemoteInterest(s[0], "after.failover") || hasRemoteInterest(s[2], "after.failover")
	})
	waitFor(t, "the message across the remaining cluster", func() bool {
		other.Publish("after.failover", []byte("ok"))
		select {
		case <-ch:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
}

// TestRouteMalformedInput: garbage, a bad CONNECT and an endless line on the
// route port close that connection only; the cluster keeps routing.
func TestRouteMalformedInput(t *testing.T) {
	s := startMesh(t, 2)
	addr := s[0].ClusterAddr().String()
	for _, in := range []string{
		"HELLO WORLD\r\n",
		"CONNECT {not json}\r\n",
		"CONNECT {\"name\":\"x\"}\r\nRMSG $G foo 5000000000\r\n",
		"RS+ " + strings.Repeat("a", 2<<20) + "\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
			t.Fatalf("route port greeting: %q %v", line, err)
		}
		c.Write([]byte(in))
		for {
			if _, err := br.ReadString('\n'); err != nil {
				break // closed by the server
			}
		}
		c.Close()
	}
	a, b := connect(t, s[0]), connect(t, s[1])
	ch, _ := collect(t, b, "still.works", "")
	waitFor(t, "interest", func() bool { return hasRemoteInterest(s[0], "still.works") })
	a.Publish("still.works", []byte("1"))
	recv(t, ch)
	if len(s[0].Routes()) != 1 {
		t.Fatalf("routes after the bad input: %d", len(s[0].Routes()))
	}
}

// TestRouteCredentials: a server with route credentials takes routes that
// present them and refuses one that does not.
func TestRouteCredentials(t *testing.T) {
	co := clusterOpts(t, "C")
	co.Username, co.Password = "ru", "rp"
	seed := startClustered(t, "s0", co)
	addr := seed.ClusterAddr().String()
	// Every server of the cluster asks the same credentials, as a
	// deployment configures them; a route that presents wrong ones gets
	// none of them.
	gco := clusterOpts(t, "C", "nats://ru:rp@"+addr)
	gco.Username, gco.Password = "ru", "rp"
	good := startClustered(t, "s1", gco)
	waitMesh(t, seed, good)
	bad := startClustered(t, "s2", clusterOpts(t, "C", "nats://ru:wrong@"+addr))
	// The dialer may count its route for the moment before the refusal
	// reaches it (as with nats-server); the servers asking credentials
	// never register it, and nothing crosses.
	sub := connect(t, seed)
	ch, _ := collect(t, sub, "secret", "")
	pub := connect(t, bad)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if len(seed.Routes()) != 1 || len(good.Routes()) != 1 {
			t.Fatalf("a route with wrong credentials was registered: seed %d, good %d", len(seed.Routes()), len(good.Routes()))
		}
		pub.Publish("secret", []byte("x"))
		select {
		case m := <-ch:
			t.Fatalf("a message crossed the refused route: %q", m.Data)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
