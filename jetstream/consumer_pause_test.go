package jetstream

import (
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestConsumerPause drives CONSUMER.PAUSE through nats.go's PauseConsumer
// and ResumeConsumer: replies and info as nats-server 2.15 gives them,
// no delivery while paused, delivery once the deadline passes, and a pause
// that outlives a restart.
func TestConsumerPause(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	c, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "s.a", 1, 1)

	later := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	resp, err := js.PauseConsumer(ctxT(t), "S", "p", later)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Paused || !resp.PauseUntil.Equal(later) || resp.PauseRemaining <= 59*time.Minute || resp.PauseRemaining > time.Hour {
		t.Fatalf("pause reply: %+v", resp)
	}
	ci := consumerInfo(t, c)
	if !ci.Paused || ci.PauseRemaining <= 0 || ci.Config.PauseUntil == nil || !ci.Config.PauseUntil.Equal(later) ||
		ci.Config.Metadata[api.MetaRequiredLevel] != "1" {
		t.Fatalf("paused info: paused %v remaining %v until %v level %q", ci.Paused, ci.PauseRemaining, ci.Config.PauseUntil, ci.Config.Metadata[api.MetaRequiredLevel])
	}
	if got := fetchAll(t, c, 1, 300*time.Millisecond); len(got) != 0 {
		t.Fatalf("paused consumer delivered %d", len(got))
	}
	// A create of the existing consumer keeps its pause, as nats-server.
	if c, err = s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "p", AckPolicy: njs.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if ci := consumerInfo(t, c); !ci.Paused {
		t.Fatal("create of the existing consumer cleared its pause")
	}

	// Across a restart the pause holds: it is in the persisted config.
	ts = ts.restart()
	if js, err = njs.New(ts.connect()); err != nil {
		t.Fatal(err)
	}
	if s, err = js.Stream(ctxT(t), "S"); err != nil {
		t.Fatal(err)
	}
	if c, err = s.Consumer(ctxT(t), "p"); err != nil {
		t.Fatal(err)
	}
	if ci := consumerInfo(t, c); !ci.Paused || ci.Config.PauseUntil == nil || !ci.Config.PauseUntil.Equal(later) {
		t.Fatalf("after restart: paused %v until %v", ci.Paused, ci.Config.PauseUntil)
	}
	if got := fetchAll(t, c, 1, 300*time.Millisecond); len(got) != 0 {
		t.Fatalf("paused consumer delivered %d after restart", len(got))
	}

	// Resume: the message comes, and the info no longer says paused.
	resp, err = js.ResumeConsumer(ctxT(t), "S", "p")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Paused || !resp.PauseUntil.IsZero() || resp.PauseRemaining != 0 {
		t.Fatalf("resume reply: %+v", resp)
	}
	got := fetchAll(t, c, 1, 5*time.Second)
	if len(got) != 1 || string(got[0].Data()) != "msg-1" {
		t.Fatalf("after resume fetched %d", len(got))
	}
	got[0].Ack()
	if ci := consumerInfo(t, c); ci.Paused || ci.Config.PauseUntil != nil || ci.Config.Metadata[api.MetaRequiredLevel] != "0" {
		t.Fatalf("resumed info: paused %v until %v level %q", ci.Paused, ci.Config.PauseUntil, ci.Config.Metadata[api.MetaRequiredLevel])
	}

	// A short pause: a waiting pull gets the message only once it ends.
	until := time.Now().Add(time.Second).UTC()
	if _, err := js.PauseConsumer(ctxT(t), "S", "p", until); err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "s.a", 2, 1)
	got = fetchAll(t, c, 1, 10*time.Second)
	if len(got) != 1 || string(got[0].Data()) != "msg-2" {
		t.Fatalf("after the pause ended fetched %d", len(got))
	}
	if now := time.Now(); now.Before(until) {
		t.Fatalf("delivered %v before the pause ended", until.Sub(now))
	}

	// Created paused: the create reply and info say so.
	q, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "q", PauseUntil: &later})
	if err != nil {
		t.Fatal(err)
	}
	if ci := q.CachedInfo(); !ci.Paused || ci.PauseRemaining <= 0 {
		t.Fatalf("created paused: %v %v", ci.Paused, ci.PauseRemaining)
	}
	if got := fetchAll(t, q, 1, 300*time.Millisecond); len(got) != 0 {
		t.Fatalf("consumer created paused delivered %d", len(got))
	}

	// Errors, as nats-server.
	if _, err := js.PauseConsumer(ctxT(t), "S", "nope", later); apiCode(err) != 10014 {
		t.Fatalf("pause of a missing consumer: %v", err)
	}
	if _, err := js.PauseConsumer(ctxT(t), "NOPE", "p", later); apiCode(err) != 10059 {
		t.Fatalf("pause on a missing stream: %v", err)
	}
}
