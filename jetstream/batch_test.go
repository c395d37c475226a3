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

// TestAtomicBatchStagingBounded: the bytes staged by uncommitted atomic
// batches are bounded per stream and in the server (here lowered to 1 MiB
// and 2 MiB): a batch that would outgrow the stream's bound is dropped with
// 10199, one that finds the bound used by other batches with 10210 (429),
// and a publisher opening batch after batch never gets the server to stage
// more than the bound. Committed and dropped batches give their bytes back.
func TestAtomicBatchStagingBounded(t *testing.T) {
	const perStream, total = 1 << 20, 2 << 20
	cfg := fastSync()
	cfg.staged = stagedBounds{perStream: perStream, total: total}
	ts := startServer(t, cfg)
	nc := ts.connect()
	js, _ := njs.New(nc)
	for _, n := range []string{"A", "B", "C"} {
		if _, err := js.CreateStream(context.Background(), njs.StreamConfig{Name: n, Subjects: []string{strings.ToLower(n) + ".>"}, AllowAtomicPublish: true}); err != nil {
			t.Fatal(err)
		}
	}
	payload := make([]byte, 100<<10)
	send := func(subj, id string, seq int, commit string) *nats.Msg {
		t.Helper()
		m := nats.NewMsg(subj)
		m.Data = payload
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(seq))
		if commit != "" {
			m.Header.Set("Nats-Batch-Commit", commit)
		}
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatalf("%s %d: %v", id, seq, err)
		}
		if n := atomicStagedBytes.Load(); n > total {
			t.Fatalf("%d bytes staged, over the %d bound", n, total)
		}
		return r
	}
	staged := func(r *nats.Msg) bool { return len(r.Data) == 0 }

	// One batch larger than the stream's bound: the 11th message of
	// 100 KiB passes 1 MiB.
	for i := 1; i <= 10; i++ {
		if r := send("a.x", "big", i, ""); !staged(r) {
			t.Fatalf("big %d: %s", i, r.Data)
		}
	}
	wantBatchError(t, send("a.x", "big", 11, ""), api.ErrAtomicPublishTooLargeBatch, "atomic publish batch is too large: 1048576")
	if n := atomicStagedBytes.Load(); n != 0 {
		t.Fatalf("%d bytes still staged after the batch was dropped", n)
	}

	// Two batches share the stream's bound: the second finds it used.
	for i := 1; i <= 5; i++ {
		if r := send("a.x", "a1", i, ""); !staged(r) {
			t.Fatalf("a1 %d: %s", i, r.Data)
		}
	}
	for i := 1; i <= 5; i++ {
		if r := send("a.x", "a2", i, ""); !staged(r) {
			t.Fatalf("a2 %d: %s", i, r.Data)
		}
	}
	wantBatchError(t, send("a.x", "a2", 6, ""), api.ErrAtomicPublishTooManyInflight, "atomic publish too many inflight")

	// A publisher opening batch after batch (each small enough) on other
	// streams, never committing, stops at the server's bound: 10 MB sent,
	// at most 2 MiB held (a1's 500 KiB included).
	accepted, refused := 0, 0
	for b := 0; b < 20; b++ {
		subj := []string{"b.x", "c.x"}[b%2]
		id := "flood" + strconv.Itoa(b)
		for i := 1; i <= 5; i++ {
			r := send(subj, id, i, "")
			if !staged(r) {
				wantBatchError(t, r, api.ErrAtomicPublishTooManyInflight, "atomic publish too many inflight")
				refused++
				break
			}
			accepted++
		}
	}
	if refused == 0 || int64(accepted+5)*int64(len(payload)) > total {
		t.Fatalf("%d messages of %d bytes staged beside a1's 5 (%d refused), bound %d", accepted, len(payload), refused, total)
	}

	// The batch left open still commits, and gives its bytes back.
	r := send("a.x", "a1", 6, "1")
	var ack struct {
		Error *api.ApiError `json:"error"`
		Count int           `json:"count"`
	}
	if err := json.Unmarshal(r.Data, &ack); err != nil || ack.Error != nil || ack.Count != 6 {
		t.Fatalf("commit of a1: %s", r.Data)
	}
	// Deleting the streams drops what is still open.
	for _, n := range []string{"A", "B", "C"} {
		if err := js.DeleteStream(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	if n := atomicStagedBytes.Load(); n != 0 {
		t.Fatalf("%d bytes still staged with no open batch", n)
	}
}
