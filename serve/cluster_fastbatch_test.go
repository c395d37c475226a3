package serve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestClusteredFastBatch: a fast batch (allow_batched, reply subjects
// ending in .$FI) published through a server that is not necessarily the
// stream's leader into an R3 stream gets its first flow ack and the
// commit's PubAck, and every message is stored.
func TestClusteredFastBatch(t *testing.T) {
	servers := startCluster(t, 3)
	nc, err := nats.Connect(servers[1].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FB", Subjects: []string{"fb.>"}, Replicas: 3, AllowBatchPublish: true})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create R3 stream: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sub, err := nc.SubscribeSync("_FB.>")
	if err != nil {
		t.Fatal(err)
	}
	pub := func(seq, op int) {
		t.Helper()
		m := nats.NewMsg("fb.x")
		m.Data = []byte(fmt.Sprint(seq))
		m.Reply = fmt.Sprintf("_FB.b.10.fail.%d.%d.$FI", seq, op)
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	next := func() (*nats.Msg, error) {
		t.Helper()
		m, err := sub.NextMsg(30 * time.Second)
		if err != nil && err != nats.ErrNoResponders {
			t.Fatalf("waiting for a reply: %v", err)
		}
		return m, err
	}
	// Until the stream's interest reaches this server, a publish gets the
	// no-responders status: the batch's first message is sent again.
	for {
		pub(1, 0)
		m, err := next()
		if err == nats.ErrNoResponders && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if want := `{"type":"ack","seq":0,"msgs":10}`; err != nil || string(m.Data) != want {
			t.Fatalf("first message: got %v %v, want %s", m, err, want)
		}
		break
	}
	for seq := 2; seq <= 4; seq++ {
		pub(seq, 1)
	}
	pub(5, 2)
	if m, err := next(); err != nil || string(m.Data) != `{"stream":"FB","seq":5,"batch":"b","count":5}` {
		t.Fatalf("commit: got %v %v", m, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "FB")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.CachedInfo().State.Msgs; n != 5 {
		t.Fatalf("stream holds %d messages, want 5", n)
	}
}
