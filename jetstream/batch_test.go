package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// batchMsg publishes message seq of batch id on subj and returns the reply.
func batchMsg(t *testing.T, nc *nats.Conn, subj, id string, seq int, commit string, hdrs ...string) *nats.Msg {
	t.Helper()
	m := nats.NewMsg(subj)
	m.Data = []byte(fmt.Sprintf("%s-%d", id, seq))
	if id != "" {
		m.Header.Set("Nats-Batch-Id", id)
	}
	if seq > 0 {
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(seq))
	}
	if commit != "" {
		m.Header.Set("Nats-Batch-Commit", commit)
	}
	for i := 0; i+1 < len(hdrs); i += 2 {
		m.Header.Set(hdrs[i], hdrs[i+1])
	}
	r, err := nc.RequestMsg(m, 5*time.Second)
	if err != nil {
		t.Fatalf("batch %s message %d: %v", id, seq, err)
	}
	return r
}

// wantBatchError fails unless r is an error PubAck with code and text.
func wantBatchError(t *testing.T, r *nats.Msg, code api.ErrCode, text string) {
	t.Helper()
	var resp api.PubAckResponse
	if err := json.Unmarshal(r.Data, &resp); err != nil || resp.Error == nil || resp.Error.ErrCode != code || resp.Error.Description != text {
		t.Fatalf("reply %s, want error %d %q", r.Data, code, text)
	}
}

func batchStreamMsgs(t *testing.T, js njs.JetStream, name string) uint64 {
	t.Helper()
	s, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.Msgs
}

// TestAtomicBatch: on both stores, staged messages are answered with an
// empty reply and stay invisible; the commit stores them all at once and
// answers with the batch PubAck; an "eob" commit is not stored and marks
// the last stored message as the commit, as nats-server does.
func TestAtomicBatch(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := context.Background()
		nc := ts.connect()
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: storage, AllowAtomicPublish: true}); err != nil {
			t.Fatal(err)
		}
		c, err := js.CreateOrUpdateConsumer(ctx, "B", njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			if r := batchMsg(t, nc, "b.x", "one", i, ""); len(r.Data) != 0 {
				t.Fatalf("staged message %d answered %q, want an empty reply", i, r.Data)
			}
		}
		if n := batchStreamMsgs(t, js, "B"); n != 0 {
			t.Fatalf("%d messages visible before the commit", n)
		}
		r := batchMsg(t, nc, "b.y", "one", 3, "1")
		if got, want := string(r.Data), `{"stream":"B","seq":3,"batch":"one","count":3}`; got != want {
			t.Fatalf("commit PubAck %s, want %s", got, want)
		}
		if n := batchStreamMsgs(t, js, "B"); n != 3 {
			t.Fatalf("%d messages after the commit, want 3", n)
		}
		batch, err := c.FetchNoWait(10)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			if string(m.Data()) != fmt.Sprintf("one-%d", n) {
				t.Fatalf("consumer message %d: %q", n, m.Data())
			}
		}
		if n != 3 {
			t.Fatalf("consumer got %d messages, want 3", n)
		}

		batchMsg(t, nc, "b.x", "two", 1, "")
		batchMsg(t, nc, "b.x", "two", 2, "")
		r = batchMsg(t, nc, "b.x", "two", 3, "eob")
		if got, want := string(r.Data), `{"stream":"B","seq":5,"batch":"two","count":2}`; got != want {
			t.Fatalf("eob commit PubAck %s, want %s", got, want)
		}
		s, _ := js.Stream(ctx, "B")
		m, err := s.GetMsg(ctx, 5)
		if err != nil || m.Header.Get("Nats-Batch-Commit") != "1" || string(m.Data) != "two-2" {
			t.Fatalf("last message of an eob batch: %v %v", m, err)
		}
		if _, err := s.GetMsg(ctx, 6); err == nil {
			t.Fatal("the eob message was stored")
		}
	})
}

// TestAtomicBatchErrors: nats-server's codes and texts for each refusal,
// and a refused commit stores nothing.
func TestAtomicBatchErrors(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "N", Subjects: []string{"n.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	wantBatchError(t, batchMsg(t, nc, "n.x", "a", 1, "1"), 10174, "atomic publish is disabled")
	wantBatchError(t, batchMsg(t, nc, "b.x", strings.Repeat("i", 65), 1, "1"), 10179, "atomic publish batch ID is invalid")
	wantBatchError(t, batchMsg(t, nc, "b.x", "a", 0, "1"), 10175, "atomic publish sequence is missing")
	wantBatchError(t, batchMsg(t, nc, "b.x", "a", 2, ""), 10176, "atomic publish batch is incomplete")
	wantBatchError(t, batchMsg(t, nc, "b.x", "a", 1001, "1"), 10199, "atomic publish batch is too large: 1000")
	wantBatchError(t, batchMsg(t, nc, "b.x", "a", 1, "eob"), 10176, "atomic publish batch is incomplete")

	// A gap drops the batch: what follows is unknown.
	batchMsg(t, nc, "b.x", "g", 1, "")
	wantBatchError(t, batchMsg(t, nc, "b.x", "g", 3, ""), 10176, "atomic publish batch is incomplete")
	wantBatchError(t, batchMsg(t, nc, "b.x", "g", 2, "1"), 10176, "atomic publish batch is incomplete")

	batchMsg(t, nc, "b.x", "c", 1, "")
	wantBatchError(t, batchMsg(t, nc, "b.x", "c", 2, "yes"), 10200, "atomic publish batch commit is invalid")

	batchMsg(t, nc, "b.x", "h", 1, "")
	wantBatchError(t, batchMsg(t, nc, "b.x", "h", 2, "1", "Nats-Expected-Last-Msg-Id", "x"), 10177,
		"atomic publish unsupported header used: Nats-Expected-Last-Msg-Id")

	batchMsg(t, nc, "b.x", "d", 1, "", "Nats-Msg-Id", "m1")
	wantBatchError(t, batchMsg(t, nc, "b.x", "d", 2, "1", "Nats-Msg-Id", "m1"), 10201, "atomic publish batch contains duplicate message id")

	batchMsg(t, nc, "b.x", "e", 1, "")
	wantBatchError(t, batchMsg(t, nc, "b.x", "e", 2, "1", "Nats-Expected-Last-Sequence", "1"), 10164, "wrong last sequence")
	wantBatchError(t, batchMsg(t, nc, "b.x", "f", 1, "1", "Nats-Expected-Last-Sequence", "7"), 10071, "wrong last sequence: 0")

	batchMsg(t, nc, "b.x", "lvl", 1, "")
	wantBatchError(t, batchMsg(t, nc, "b.x", "lvl", 2, "1", "Nats-Required-Api-Level", "99"), 10185, "JetStream minimum api level required")
	wantBatchError(t, batchMsg(t, nc, "b.x", "lvl", 3, "1"), 10176, "atomic publish batch is incomplete")

	if n := batchStreamMsgs(t, js, "B"); n != 0 {
		t.Fatalf("%d messages stored by refused batches", n)
	}
	// A level jetwal has passes, and the header is not stored.
	batchMsg(t, nc, "b.x", "lvl-ok", 1, "", "Nats-Required-Api-Level", "1")
	if r := batchMsg(t, nc, "b.x", "lvl-ok", 2, "1"); !strings.Contains(string(r.Data), `"count":2`) {
		t.Fatalf("batch with a level jetwal has: %s", r.Data)
	}
	s, _ := js.Stream(ctx, "B")
	if m, err := s.GetMsg(ctx, 1); err != nil || m.Header.Get("Nats-Required-Api-Level") != "" || m.Header.Get("Nats-Batch-Id") != "lvl-ok" {
		t.Fatalf("stored batch message: %v %v", m, err)
	}
	if err := s.Purge(ctx); err != nil {
		t.Fatal(err)
	}

	// 50 open batches per stream.
	for i := range maxAtomicBatchPerStream {
		batchMsg(t, nc, "b.x", fmt.Sprintf("open%d", i), 1, "")
	}
	wantBatchError(t, batchMsg(t, nc, "b.x", "one-too-many", 1, ""), 10210, "atomic publish too many inflight")
	if r := batchMsg(t, nc, "b.x", "open0", 2, "1"); !strings.Contains(string(r.Data), `"count":2`) {
		t.Fatalf("commit of an open batch: %s", r.Data)
	}
	if r := batchMsg(t, nc, "b.x", "now-fits", 1, ""); len(r.Data) != 0 {
		t.Fatalf("a batch after one closed: %s", r.Data)
	}
}

// TestAtomicBatchSurvivesRestart: a committed batch is in the store after a
// restart, a batch staged but not committed is not.
func TestAtomicBatchSurvivesRestart(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		commit := ""
		if i == 3 {
			commit = "1"
		}
		batchMsg(t, nc, "b.x", "done", i, commit)
	}
	batchMsg(t, nc, "b.x", "open", 1, "")
	ts = ts.restart()
	nc = ts.connect()
	js, _ = njs.New(nc)
	if n := batchStreamMsgs(t, js, "B"); n != 3 {
		t.Fatalf("%d messages after a restart, want the 3 of the committed batch", n)
	}
	wantBatchError(t, batchMsg(t, nc, "b.x", "open", 2, "1"), 10176, "atomic publish batch is incomplete")
}

// TestAtomicBatchLimit: a batch that a stream limit (max_msgs with discard
// new) refuses part way is refused whole: none of its messages stays.
func TestAtomicBatchLimit(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		nc := ts.connect()
		if _, err := js.CreateStream(context.Background(), njs.StreamConfig{Name: "L", Subjects: []string{"l.>"}, Storage: storage,
			AllowAtomicPublish: true, MaxMsgs: 3, Discard: njs.DiscardNew}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(context.Background(), "l.first", nil); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			batchMsg(t, nc, "l.x", "big", i, "")
		}
		wantBatchError(t, batchMsg(t, nc, "l.x", "big", 3, "1"), 10077, "maximum messages exceeded")
		if n := batchStreamMsgs(t, js, "L"); n != 1 {
			t.Fatalf("%d messages after a refused batch, want the 1 before it", n)
		}
		// The stream goes on: a batch that fits is stored after it.
		batchMsg(t, nc, "l.y", "fits", 1, "")
		if r := batchMsg(t, nc, "l.y", "fits", 2, "1"); !strings.Contains(string(r.Data), `"count":2`) {
			t.Fatalf("batch after the refused one: %s", r.Data)
		}
		if n := batchStreamMsgs(t, js, "L"); n != 3 {
			t.Fatalf("%d messages, want 3", n)
		}
	})
}

// TestAtomicBatchAbandoned: a batch left without a message for the idle
// timeout is dropped (its next message is "incomplete"), and nats-server's
// BATCH_ABANDONED advisory reports it, as it reports a gap.
func TestAtomicBatchAbandoned(t *testing.T) {
	cfg := fastSync()
	cfg.waits.batchIdle = 300 * time.Millisecond
	ts := startServer(t, cfg)
	nc := ts.connect()
	js, _ := njs.New(nc)
	if _, err := js.CreateStream(context.Background(), njs.StreamConfig{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	adv, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.B")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	next := func() map[string]any {
		t.Helper()
		m, err := adv.NextMsg(20 * time.Second)
		if err != nil {
			t.Fatalf("no advisory: %v", err)
		}
		var ev map[string]any
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	batchMsg(t, nc, "b.x", "slow", 1, "")
	ev := next()
	if ev["type"] != "io.nats.jetstream.advisory.v1.stream_batch_abandoned" || ev["stream"] != "B" || ev["batch"] != "slow" || ev["reason"] != "timeout" {
		t.Fatalf("advisory %v", ev)
	}
	wantBatchError(t, batchMsg(t, nc, "b.x", "slow", 2, "1"), 10176, "atomic publish batch is incomplete")

	batchMsg(t, nc, "b.x", "gap", 1, "")
	wantBatchError(t, batchMsg(t, nc, "b.x", "gap", 3, "1"), 10176, "atomic publish batch is incomplete")
	if ev := next(); ev["batch"] != "gap" || ev["reason"] != "incomplete" {
		t.Fatalf("advisory %v", ev)
	}
}

// TestAtomicBatchCounters: on a counter stream the increments of a batch
// add up in order (within the batch and onto the stored value), the batch
// is stored with the values, and a later single increment goes on from
// them; a message without Nats-Incr refuses the batch (10169).
func TestAtomicBatchCounters(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "C", Subjects: []string{"c.>"}, AllowMsgCounter: true, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	incr := func(subj, by string) *nats.Msg {
		t.Helper()
		m := nats.NewMsg(subj)
		m.Header.Set("Nats-Incr", by)
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	incr("c.a", "10")
	// batchMsg sets a body; counters take none, so build these by hand.
	bmsg := func(subj, id string, seq int, by, commit string) *nats.Msg {
		t.Helper()
		m := nats.NewMsg(subj)
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(seq))
		if by != "" {
			m.Header.Set("Nats-Incr", by)
		}
		if commit != "" {
			m.Header.Set("Nats-Batch-Commit", commit)
		}
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	bmsg("c.a", "k", 1, "1", "")
	bmsg("c.b", "k", 2, "5", "")
	if r := bmsg("c.a", "k", 3, "2", "1"); string(r.Data) != `{"stream":"C","seq":4,"batch":"k","count":3}` {
		t.Fatalf("commit: %s", r.Data)
	}
	s, _ := js.Stream(ctx, "C")
	for subj, want := range map[string]string{"c.a": `{"val":"13"}`, "c.b": `{"val":"5"}`} {
		m, err := s.GetLastMsgForSubject(ctx, subj)
		if err != nil || string(m.Data) != want {
			t.Fatalf("%s after the batch: %v %s, want %s", subj, err, m.Data, want)
		}
	}
	if r := incr("c.a", "1"); !strings.Contains(string(r.Data), `"val":"14"`) {
		t.Fatalf("increment after the batch: %s", r.Data)
	}
	bmsg("c.a", "n", 1, "1", "")
	wantBatchError(t, bmsg("c.a", "n", 2, "", "1"), 10169, "message counter increment is missing")
}
