package serve

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/config"
)

// TestClusterMoveByPlacement: editing a replicated stream's placement
// moves it (`nats stream edit --tag`): on s1 {a}, s2 {a, b} and s3 {b},
// an R2 stream placed on tag a (s1, s2) moves to tag b (s2, s3) with its
// messages and its durable consumer's position, takes publishes on the
// way and afterwards, and a placement that no server fits is refused
// with 10005 and leaves the stream where it is.
func TestClusterMoveByPlacement(t *testing.T) {
	tags := [][]string{{"a"}, {"a", "b"}, {"b"}}
	servers := startClusterWith(t, 3, func(i int, o *Options) {
		opsOptions(t, o)
		o.Server.Tags = config.NormalizeTags(tags[i])
	})
	awaitMetaLeader(t, servers)
	eventually(t, "R2 on tag a", 60*time.Second, func() error {
		out, err := runCLI(t, servers[2], "stream", "add", "MOVE", "--subjects", "move.>", "--replicas", "2", "--tag", "a", "--defaults")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	_, js := connectJS(t, servers[0], "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	placedOn := func(want ...string) {
		t.Helper()
		eventually(t, fmt.Sprintf("MOVE on %v", want), 90*time.Second, func() error {
			peers, _, err := streamPeers(ctx, js, "MOVE")
			if err != nil {
				return err
			}
			if slices.Sort(peers); !slices.Equal(peers, want) {
				return fmt.Errorf("on %v", peers)
			}
			return nil
		})
	}
	placedOn("s1", "s2")
	publish := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			var err error
			for try := 0; try < 50; try++ { // a leader change on the way
				if _, err = js.Publish(ctx, "move."+strconv.Itoa(i), []byte(strconv.Itoa(i))); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
		}
	}
	publish(0, 100)
	cons, err := js.CreateOrUpdateConsumer(ctx, "MOVE", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(40, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 40 {
		t.Fatalf("fetched %d of 40", n)
	}

	if out, err := runCLI(t, servers[0], "stream", "edit", "MOVE", "--tag", "b", "-f"); err != nil {
		t.Fatalf("stream edit --tag b: %v\n%s", err, out)
	}
	publish(100, 150)
	placedOn("s2", "s3")
	publish(150, 200)

	s, err := js.Stream(ctx, "MOVE")
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	if info.State.Msgs != 200 || info.State.LastSeq != 200 || !slices.Equal(info.Config.Placement.Tags, []string{"b"}) {
		t.Fatalf("after the move: state %+v placement %+v", info.State, info.Config.Placement)
	}
	for _, seq := range []uint64{1, 100, 200} {
		m, err := s.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != strconv.Itoa(int(seq-1)) {
			t.Fatalf("message %d after the move: %v %v", seq, m, err)
		}
	}
	// The durable carried on where it was: the next message is the 41st.
	batch, err = cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		if md, _ := m.Metadata(); md == nil || md.Sequence.Stream != 41 {
			t.Fatalf("durable after the move: %+v", md)
		}
	}

	// No server has tag c: refused, and the stream stays on s2, s3.
	out, err := runCLI(t, servers[1], "stream", "edit", "MOVE", "--tag", "c", "-f")
	if want := "no suitable peers for placement, tags not matched ['c'] (10005)"; err == nil || !strings.Contains(out, want) {
		t.Fatalf("edit --tag c: %v\n%s\nwant %q", err, out, want)
	}
	placedOn("s2", "s3")
}
