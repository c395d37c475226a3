package server

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestLameDuck: in lame duck mode a server refuses new clients at once,
// tells its clients (nats.go's lame duck handler fires) and the other
// server of its cluster (which stops advertising it), waits the grace
// period, then closes its clients one after another over the duration,
// and shuts down.
func TestLameDuck(t *testing.T) {
	s0 := startServer(t, Options{ServerName: "s0", Cluster: clusterOpts(t, "C")})
	s1 := startServer(t, Options{ServerName: "s1", Cluster: clusterOpts(t, "C", routeURL(s0))})
	waitMesh(t, s0, s1)
	advertised := func() bool {
		s1.cluster.mu.Lock()
		defer s1.cluster.mu.Unlock()
		for u := range s1.cluster.mu.urls {
			if u == s0.Addr().String() {
				return true
			}
		}
		return false
	}
	waitFor(t, "s1 advertising s0", advertised)

	const clients = 4
	var mu sync.Mutex
	var told int
	var closedAt []time.Time
	for range clients {
		connect(t, s0, nats.NoReconnect(),
			nats.LameDuckModeHandler(func(*nats.Conn) { mu.Lock(); told++; mu.Unlock() }),
			nats.DisconnectErrHandler(func(*nats.Conn, error) { mu.Lock(); closedAt = append(closedAt, time.Now()); mu.Unlock() }))
	}
	const grace, duration = 300 * time.Millisecond, 600 * time.Millisecond
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- s0.LameDuck(context.Background(), grace, duration) }()
	waitFor(t, "lame duck mode", s0.LameDuckMode)
	waitFor(t, "the listener closed", func() bool {
		c, err := net.DialTimeout("tcp", s0.Addr().String(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	waitFor(t, "every client told", func() bool { mu.Lock(); defer mu.Unlock(); return told == clients })
	waitFor(t, "s1 no longer advertising s0", func() bool { return !advertised() })
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("lame duck mode did not end in a shutdown")
	}
	// nats.go calls the disconnect handlers on a goroutine of its own.
	waitFor(t, "every client's disconnect", func() bool { mu.Lock(); defer mu.Unlock(); return len(closedAt) == clients })
	mu.Lock()
	defer mu.Unlock()
	first, last := closedAt[0], closedAt[0]
	for _, at := range closedAt {
		if at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	if first.Sub(start) < grace {
		t.Fatalf("a client was closed %v after lame duck mode began, before the %v grace period", first.Sub(start), grace)
	}
	// Closed one after another: the last a good part of the duration
	// after the first (three steps of 150 ms; half of it as the bound).
	if spread := last.Sub(first); spread < duration/4 {
		t.Fatalf("clients closed within %v of each other, not spread over %v", spread, duration)
	}
}
