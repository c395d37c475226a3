package jetstream

import (
	"context"
	"syscall"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// TestDoubleAckNotConfirmedWhenNotPersisted: when the consumer's state
// cannot be written (a full disk), a double ack gets an error, not a
// confirmation the server cannot keep.
func TestDoubleAckNotConfirmedWhenNotPersisted(t *testing.T) {
	for _, mode := range []wal.SyncMode{wal.SyncAlways, wal.SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			efs := vfs.NewErrorFS(vfs.Default)
			ts := startServer(t, Config{FS: efs, Sync: mode})
			js, _ := njs.New(ts.connect())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			msgs := fetchFromNewDurable(ctx, t, js, 2)
			if err := msgs[0].DoubleAck(ctx); err != nil {
				t.Fatalf("first ack on a healthy disk: %v", err)
			}
			efs.Inject(vfs.Fault{Op: vfs.OpWrite, Path: "/obs/", Err: syscall.ENOSPC})
			actx, acancel := context.WithTimeout(ctx, 5*time.Second)
			defer acancel()
			if err := msgs[1].DoubleAck(actx); err == nil {
				t.Fatal("double ack confirmed although its state could not be written")
			}
		})
	}
}

// fetchFromNewDurable publishes n messages on stream A ("a.>"), creates
// durable D with explicit acks and fetches them, unacknowledged.
func fetchFromNewDurable(ctx context.Context, t *testing.T, js njs.JetStream, n int) []njs.Msg {
	t.Helper()
	s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "A", Subjects: []string{"a.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := js.Publish(ctx, "a.x", []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.CreateOrUpdateConsumer(ctx, njs.ConsumerConfig{Durable: "D", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(n)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []njs.Msg
	for m := range b.Messages() {
		msgs = append(msgs, m)
	}
	if len(msgs) != n {
		t.Fatalf("fetched %d, want %d", len(msgs), n)
	}
	return msgs
}

// TestStreamDeleteOnFullDisk: deleting a stream when nothing can be written
// (its store's closing checkpoint fails) still deletes it and says so: the
// reply is a success and the stream is gone, after a restart too.
func TestStreamDeleteOnFullDisk(t *testing.T) {
	efs := vfs.NewErrorFS(vfs.Default)
	ts := startServer(t, Config{FS: efs})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.F", `{"name":"F","subjects":["f.>"]}`)
	if _, err := nc.Request("f.x", []byte("m"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	efs.Inject(vfs.Fault{Op: vfs.OpWrite, Err: syscall.ENOSPC})
	efs.Inject(vfs.Fault{Op: vfs.OpCreate, Err: syscall.ENOSPC})
	m := request(t, nc, "$JS.API.STREAM.DELETE.F", "")
	if aerr := apiErrorOf(t, m.Data); aerr != nil {
		t.Fatalf("delete on a full disk: %v, want success (the stream is deleted)", aerr)
	}
	efs.Clear()
	ts = ts.restart()
	if ts.js.lookup("F") != nil {
		t.Fatal("the deleted stream came back after a restart")
	}
}
