package serve

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/internal/testport"
	"github.com/jetwal/jetwal/server"
)

// startCluster starts n servers of one clustered JetStream in this
// process, routes authenticated with a user and password; they shut down
// at the test's end (or earlier, by the test).
func startCluster(t testing.TB, n int) []*Server {
	t.Helper()
	return startClusterWith(t, n, func(int, *Options) {})
}

// startClusterWith is startCluster with each server's options amended
// (accounts, monitoring, encryption) before it starts.
func startClusterWith(t testing.TB, n int, amend func(i int, o *Options)) []*Server {
	t.Helper()
	ports := testport.Free(t, n)
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", User: url.UserPassword("route", "pw"), Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	out := make([]*Server, n)
	for i := range out {
		o := Options{
			Server: server.Options{Host: "127.0.0.1", ServerName: fmt.Sprintf("s%d", i+1),
				Cluster: &server.ClusterOptions{Name: "C", Host: "127.0.0.1", Port: ports[i], Routes: routes, Username: "route", Password: "pw"}},
			JetStream:        true,
			Store:            Store{Dir: t.TempDir()},
			LameDuckGrace:    100 * time.Millisecond,
			LameDuckDuration: 200 * time.Millisecond,
		}
		amend(i, &o)
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Error(err)
			}
		})
		out[i] = s
	}
	return out
}

// TestClusteredJetStream: three embedded servers form one clustered
// JetStream (the meta group and an R3 stream's group over the routes); a
// message published through one server is stored on every replica and
// served through another; the stream's leader leaves in lame duck mode
// (handing its leaderships over first), and publishing goes on with the
// others.
func TestClusteredJetStream(t *testing.T) {
	servers := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connect := func(s *Server) jetstream.JetStream {
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	js1, js3 := connect(servers[0]), connect(servers[2])
	retry := func(what string, f func(context.Context) error) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := f(c)
			cancel()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	retry("create R3 stream", func(c context.Context) error {
		_, err := js1.CreateStream(c, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
		return err
	})
	retry("publish", func(c context.Context) error {
		ack, err := js1.Publish(c, "orders.new", []byte("one"), jetstream.WithMsgID("one"))
		if err == nil && ack.Sequence != 1 {
			t.Fatalf("first message got sequence %d", ack.Sequence)
		}
		return err
	})
	var leader string
	retry("stream info through another server", func(c context.Context) error {
		s, err := js3.Stream(c, "ORDERS")
		if err != nil {
			return err
		}
		info, err := s.Info(c)
		if err != nil {
			return err
		}
		if info.State.Msgs != 1 || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("state %+v cluster %+v", info.State, info.Cluster)
		}
		leader = info.Cluster.Leader
		return nil
	})
	var rest []*Server
	for _, s := range servers {
		if s.Core().Name() == leader {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := s.LameDuck(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
			continue
		}
		rest = append(rest, s)
	}
	if len(rest) != 2 {
		t.Fatalf("leader %q is not one of the servers", leader)
	}
	js := connect(rest[0])
	retry("publish after the leader left", func(c context.Context) error {
		ack, err := js.Publish(c, "orders.new", []byte("two"), jetstream.WithMsgID("two"))
		if err == nil && ack.Sequence != 2 {
			t.Fatalf("second message got sequence %d", ack.Sequence)
		}
		return err
	})
	retry("both messages on the new leader", func(c context.Context) error {
		s, err := js.Stream(c, "ORDERS")
		if err != nil {
			return err
		}
		m, err := s.GetMsg(c, 1)
		if err != nil || string(m.Data) != "one" {
			return fmt.Errorf("message 1: %v", err)
		}
		return nil
	})
}

// TestClusterNewStreamsServed: a new R3 stream's create is answered once
// its leader serves it, so a durable created right after it, in a single
// request, is answered (before, nobody served the stream yet for a while
// and the request went unanswered); and new streams' first leaders
// spread over the servers (the meta leader names the server leading the
// fewest as the one to campaign first).
func TestClusterNewStreamsServed(t *testing.T) {
	servers := startCluster(t, 3)
	nc, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[string]int{}
	for i := 0; i < 6; i++ {
		cfg := jetstream.StreamConfig{Name: fmt.Sprintf("S%d", i), Subjects: []string{fmt.Sprintf("s.%d.>", i)}, Replicas: 3}
		var st jetstream.Stream
		// The first create may come before the meta group has a leader.
		eventually(t, "create "+cfg.Name, time.Minute, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err = js.CreateStream(ctx, cfg)
			return err
		})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy})
		cancel()
		if err != nil {
			t.Fatalf("durable of %s, created right after it: %v", cfg.Name, err)
		}
		leaders[c.CachedInfo().Cluster.Leader]++
	}
	if len(leaders) < 2 {
		t.Fatalf("leaders of 6 new streams: %v, want them spread over the servers", leaders)
	}
}
