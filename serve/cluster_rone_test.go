package serve

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterReplicasDownToOneAndBack: with the CLI on three servers, an
// R3 stream goes to one replica (`stream edit --replicas 1`: it stays a
// raft group, of one) and back to three, keeping its messages and its
// durable's position, taking publishes at each size; its info says one
// replica with a leader and no followers while it has one.
func TestClusterReplicasDownToOneAndBack(t *testing.T) {
	servers := startOpsCluster(t, 3)
	awaitMetaLeader(t, servers)
	_, js := connectJS(t, servers[0], "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cli := func(args ...string) {
		t.Helper()
		retryCLI(t, servers[1], 60*time.Second, args, "")
	}
	cli("stream", "add", "DOWN", "--subjects", "down.>", "--replicas", "3", "--defaults")
	size := func(n int) {
		t.Helper()
		eventually(t, fmt.Sprintf("DOWN on %d servers", n), 90*time.Second, func() error {
			peers, info, err := streamPeers(ctx, js, "DOWN")
			if err != nil {
				return err
			}
			if len(peers) != n || info.Config.Replicas != n || len(info.Cluster.Replicas) != n-1 {
				return fmt.Errorf("peers %v, replicas %d", peers, info.Config.Replicas)
			}
			return nil
		})
	}
	size(3)
	next := 0
	publish := func(n int) {
		t.Helper()
		for range n {
			var err error
			for try := 0; try < 50; try++ { // a leader change on the way
				c, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err = js.Publish(c, "down."+strconv.Itoa(next), []byte(strconv.Itoa(next)))
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
	publish(30)
	cons, err := js.CreateOrUpdateConsumer(ctx, "DOWN", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	fetchOne := func(wantSeq uint64) {
		t.Helper()
		fetchAcked(t, ctx, func(context.Context) (jetstream.Consumer, error) { return cons, nil }, wantSeq)
	}
	for seq := uint64(1); seq <= 10; seq++ {
		fetchOne(seq)
	}

	cli("stream", "edit", "DOWN", "--replicas", "1", "-f")
	size(1)
	publish(10)
	fetchOne(11)
	s, err := js.Stream(ctx, "DOWN")
	if err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.State.Msgs != 40 || info.State.LastSeq != 40 || info.Cluster.Leader == "" {
		t.Fatalf("at one replica: state %+v cluster %+v", info.State, info.Cluster)
	}

	cli("stream", "edit", "DOWN", "--replicas", "3", "-f")
	size(3)
	publish(10)
	fetchOne(12)
	if s, err = js.Stream(ctx, "DOWN"); err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.State.Msgs != 50 || info.State.LastSeq != 50 {
		t.Fatalf("back at three replicas: state %+v", info.State)
	}
	for _, seq := range []uint64{1, 30, 40, 50} {
		m, err := s.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != strconv.Itoa(int(seq-1)) {
			t.Fatalf("message %d: %v %v", seq, m, err)
		}
	}
}

// fetchAcked fetches one message from the consumer get returns (asked
// again on every try, as a failover may replace it), double-acks it and
// checks that it is the stream's message wantSeq.
func fetchAcked(t *testing.T, ctx context.Context, get func(context.Context) (jetstream.Consumer, error), wantSeq uint64) {
	t.Helper()
	var got uint64
	eventually(t, fmt.Sprintf("fetch of %d", wantSeq), 60*time.Second, func() error {
		c, err := get(ctx)
		if err != nil {
			return err
		}
		batch, err := c.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			md, _ := m.Metadata()
			if md == nil {
				return fmt.Errorf("no metadata")
			}
			got = md.Sequence.Stream
			if err := m.DoubleAck(ctx); err != nil {
				return err
			}
		}
		if got == 0 {
			return fmt.Errorf("nothing fetched: %v", batch.Error())
		}
		return nil
	})
	if got != wantSeq {
		t.Fatalf("fetched stream sequence %d, want %d", got, wantSeq)
	}
}
