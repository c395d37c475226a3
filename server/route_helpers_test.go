package server

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Helpers for cluster tests: servers with routes on 127.0.0.1 ports from
// :0, and a TCP proxy that can cut a route.

// clusterOpts returns route options for a test server that dials routes.
func clusterOpts(t testing.TB, name string, routes ...string) *ClusterOptions {
	t.Helper()
	co := &ClusterOptions{Name: name, Host: "127.0.0.1", ReconnectDelay: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		co.Routes = append(co.Routes, u)
	}
	return co
}

// startClustered starts a server named name with cluster options co.
func startClustered(t testing.TB, name string, co *ClusterOptions) *Server {
	t.Helper()
	return startServer(t, Options{ServerName: name, Cluster: co})
}

// routeURL returns the nats:// URL of s's route listener.
func routeURL(s *Server) string { return "nats://" + s.ClusterAddr().String() }

// startMesh starts n servers of cluster "C"; every one after the first
// knows only the first.
func startMesh(t testing.TB, n int) []*Server {
	t.Helper()
	seed := startClustered(t, "s0", clusterOpts(t, "C"))
	out := []*Server{seed}
	for i := 1; i < n; i++ {
		out = append(out, startClustered(t, "s"+string(rune('0'+i)), clusterOpts(t, "C", routeURL(seed))))
	}
	waitMesh(t, out...)
	return out
}

// waitMesh waits until every server has a route to every other.
func waitMesh(t testing.TB, servers ...*Server) {
	t.Helper()
	waitFor(t, "full mesh", func() bool {
		for _, s := range servers {
			if len(s.Routes()) != len(servers)-1 {
				return false
			}
		}
		return true
	})
}

// waitRemoteInterest waits until s knows of n remote subscriptions.
func waitRemoteInterest(t testing.TB, s *Server, n int) {
	t.Helper()
	waitFor(t, "remote interest", func() bool { return s.NumRemoteSubscriptions() == n })
}

// hasRemoteInterest reports whether s knows a remote subscription on subj
// (exact filter, optionally " queue").
func hasRemoteInterest(s *Server, key string) bool {
	for _, r := range s.Routes() {
		for _, k := range r.Subs {
			if k == key {
				return true
			}
		}
	}
	return false
}

// collect subscribes on nc and returns a channel of the messages.
func collect(t testing.TB, nc *nats.Conn, subj, queue string) (chan *nats.Msg, *nats.Subscription) {
	t.Helper()
	ch := make(chan *nats.Msg, 4096)
	var sub *nats.Subscription
	var err error
	if queue == "" {
		sub, err = nc.ChanSubscribe(subj, ch)
	} else {
		sub, err = nc.ChanQueueSubscribe(subj, queue, ch)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch, sub
}

// recv waits for one message.
func recv(t testing.TB, ch chan *nats.Msg) *nats.Msg {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a message")
		return nil
	}
}

// proxy forwards TCP connections to target until cut.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp", p.target, time.Second)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// cut closes every proxied connection (new ones are still accepted).
func (p *proxy) cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// shutdown stops s now (the cleanup's second Shutdown only waits).
func shutdown(t testing.TB, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
