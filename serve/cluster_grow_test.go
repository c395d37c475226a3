package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterGrowStreamCreatedWithOneReplica: with the CLI on three
// servers, a stream created with one replica (a local stream of one
// server) goes to three (`stream edit --replicas 3`): every server then
// serves it as its leader with the same messages, at the same sequences
// and times; a durable consumer keeps its acks; publishes go on; and the
// stream stays readable, and writable, once its original server stops.
func TestClusterGrowStreamCreatedWithOneReplica(t *testing.T) {
	servers := startOpsCluster(t, 3)
	byName := map[string]*Server{}
	for _, s := range servers {
		byName[s.Core().Name()] = s
	}
	awaitMetaLeader(t, servers)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	retryCLI(t, servers[1], 60*time.Second, []string{"stream", "add", "GROW", "--subjects", "grow.>", "--replicas", "1", "--defaults"}, "")

	// The client connects to a server that is not the stream's, which
	// is stopped at the end.
	_, js0 := connectJS(t, servers[0], "")
	var origin string
	eventually(t, "R1 stream", 60*time.Second, func() error {
		peers, _, err := streamPeers(ctx, js0, "GROW")
		if err == nil {
			origin = peers[0]
		}
		return err
	})
	var client *Server
	for _, s := range servers {
		if s.Core().Name() != origin {
			client = s
		}
	}
	_, js := connectJS(t, client, "")

	next := 0
	publish := func(n int) {
		t.Helper()
		for range n {
			var err error
			for try := 0; try < 100; try++ { // the conversion or a leader change on the way
				c, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err = js.Publish(c, "grow."+strconv.Itoa(next), []byte(strconv.Itoa(next)))
				cancel()
				if err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("publish %d: %v", next, err)
			}
			next++
		}
	}
	publish(50)
	s, err := js.Stream(ctx, "GROW")
	if err != nil {
		t.Fatal(err)
	}
	times := map[uint64]time.Time{}
	for _, seq := range []uint64{1, 25, 50} {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		times[seq] = m.Time
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "GROW", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	fetchOne := func(wantSeq uint64) {
		t.Helper()
		fetchAcked(t, ctx, func(ctx context.Context) (jetstream.Consumer, error) { return js.Consumer(ctx, "GROW", "D") }, wantSeq)
	}
	for seq := uint64(1); seq <= 10; seq++ {
		fetchOne(seq)
	}

	retryCLI(t, servers[1], 60*time.Second, []string{"stream", "edit", "GROW", "--replicas", "3", "-f"}, "being converted")
	eventually(t, "GROW on 3 servers", 90*time.Second, func() error {
		peers, info, err := streamPeers(ctx, js, "GROW")
		if err != nil {
			return err
		}
		if len(peers) != 3 || info.Config.Replicas != 3 {
			return fmt.Errorf("peers %v, replicas %d", peers, info.Config.Replicas)
		}
		return nil
	})
	// Every server leads it in turn with the 50 messages, the original
	// server last.
	order := slices.DeleteFunc(slices.Sorted(func(yield func(string) bool) {
		for name := range byName {
			if !yield(name) {
				return
			}
		}
	}), func(n string) bool { return n == origin })
	for _, name := range append(order, origin) {
		streamLedBy(t, ctx, js, client, "GROW", name, 50)
	}
	if s, err = js.Stream(ctx, "GROW"); err != nil {
		t.Fatal(err)
	}
	for seq, ts := range times {
		m, err := s.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != strconv.Itoa(int(seq-1)) || !m.Time.Equal(ts) {
			t.Fatalf("message %d after the conversion: %+v %v, want time %v", seq, m, err, ts)
		}
	}
	ci, err := js.Consumer(ctx, "GROW", "D")
	if err != nil {
		t.Fatal(err)
	}
	if info := ci.CachedInfo(); info.AckFloor.Stream != 10 || info.Delivered.Stream != 10 {
		t.Fatalf("consumer after the conversion: ack floor %+v, delivered %+v", info.AckFloor, info.Delivered)
	}
	fetchOne(11)
	publish(10)

	// The original server stops: another takes the stream over.
	sdCtx, sdCancel := context.WithTimeout(ctx, 30*time.Second)
	err = byName[origin].Shutdown(sdCtx)
	sdCancel()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "GROW led elsewhere", 90*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s, err := js.Stream(c, "GROW")
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" || info.Cluster.Leader == origin {
			return fmt.Errorf("cluster %+v", info.Cluster)
		}
		if info.State.Msgs != 60 || info.State.LastSeq != 60 {
			t.Fatalf("after the original server stopped: %+v", info.State)
		}
		return nil
	})
	publish(1)
	fetchOne(12)
	m, err := s.GetMsg(ctx, 61)
	if err != nil || string(m.Data) != "60" {
		t.Fatalf("message 61: %+v %v", m, err)
	}
}

// TestClusterGrowThenDelete: a stream created with one replica deleted
// right after its growth was asked for (while it converts, or just
// after) is gone with its consumer, and a stream created again under its
// name starts empty, with no consumer, wherever it is placed.
func TestClusterGrowThenDelete(t *testing.T) {
	servers := startOpsCluster(t, 3)
	awaitMetaLeader(t, servers)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, js := connectJS(t, servers[0], "")
	cfg := jetstream.StreamConfig{Name: "GD", Subjects: []string{"gd.>"}, Replicas: 1}
	eventually(t, "create GD", 60*time.Second, func() error {
		_, err := js.CreateStream(ctx, cfg)
		return err
	})
	for i := range 500 {
		if _, err := js.Publish(ctx, "gd."+strconv.Itoa(i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "GD", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	grown := cfg
	grown.Replicas = 3
	if _, err := js.UpdateStream(ctx, grown); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delete GD", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := js.DeleteStream(c, "GD"); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		return nil
	})
	eventually(t, "create GD again", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js.CreateStream(c, cfg)
		return err
	})
	eventually(t, "GD served, empty", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s, err := js.Stream(c, "GD")
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		// The old stream's server may not have applied the deletion yet.
		if info.State.Msgs != 0 || info.State.LastSeq != 0 || info.State.Consumers != 0 || info.Config.Replicas != 1 {
			return fmt.Errorf("GD created again: %+v", info.State)
		}
		return nil
	})
	if _, err := js.Consumer(ctx, "GD", "D"); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Fatalf("consumer of the deleted stream: %v", err)
	}
	ack, err := js.Publish(ctx, "gd.new", []byte("y"))
	if err != nil || ack.Sequence != 1 {
		t.Fatalf("publish into GD created again: %+v %v", ack, err)
	}
}
