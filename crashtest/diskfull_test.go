package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	js "github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// TestDiskFull runs the server in process over a store on the
// fault-injecting filesystem and makes the disk full (no new segment can
// be preallocated): publishes get error PubAcks (no crash, no reset stream),
// what is stored stays readable, a purge succeeds, and once space returns
// publishing works again without a restart.
func TestDiskFull(t *testing.T) {
	efs := vfs.NewErrorFS(vfs.NewMemFS())
	srv, err := server.New(server.Options{Host: "127.0.0.1", Port: 0, JetStream: true, APILevel: api.Level})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if _, err := js.New(srv, js.Config{StoreDir: "/store", FS: efs, Sync: wal.SyncAlways}); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.ClientURL(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	j, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stream, err := j.CreateStream(ctx, jetstream.StreamConfig{Name: "FULL", Subjects: []string{"full.>"}})
	if err != nil {
		t.Fatal(err)
	}
	const before = 50
	for i := 1; i <= before; i++ {
		if _, err := j.Publish(ctx, "full.a", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}

	// The disk is full: no new segment can be preallocated. Publishes fill
	// the active segment and then get error PubAcks.
	efs.Inject(vfs.Fault{Op: vfs.OpAllocate, Err: syscall.ENOSPC})
	big := bytes.Repeat([]byte("x"), 900<<10)
	var apiErr *jetstream.APIError
	for i := 0; i < 200; i++ {
		_, err := j.Publish(ctx, "full.a", big)
		if err == nil {
			continue
		}
		if !errors.As(err, &apiErr) {
			t.Fatalf("publish on a full disk: want an error PubAck, got %v", err)
		}
		break
	}
	if apiErr == nil {
		t.Fatal("publishing on a full disk never failed")
	}
	t.Logf("error PubAck on a full disk: %v", apiErr)
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatalf("stream info on a full disk: %v", err)
	}
	if info.State.Msgs < before || info.State.FirstSeq != 1 {
		t.Fatalf("stream reset by a full disk: %+v", info.State)
	}
	for q := uint64(1); q <= before; q++ {
		m, err := stream.GetMsg(ctx, q)
		if err != nil || string(m.Data) != fmt.Sprint(q) {
			t.Fatalf("message %d unreadable on a full disk: %v", q, err)
		}
	}
	// A purge works on the full disk (it frees the sealed segments), and
	// once space is back publishing works again, without a restart.
	if err := stream.Purge(ctx); err != nil {
		t.Fatalf("purge on a full disk: %v", err)
	}
	efs.Clear()
	ack, err := j.Publish(ctx, "full.a", []byte("again"))
	if err != nil {
		t.Fatalf("publish after the purge freed space: %v", err)
	}
	if ack.Sequence <= info.State.LastSeq {
		t.Fatalf("sequence %d after the purge reuses one (last was %d)", ack.Sequence, info.State.LastSeq)
	}
	// And it is durable: a restart finds it.
	nc.Close()
	srv.Shutdown(context.Background())
	srv, err = server.New(server.Options{Host: "127.0.0.1", Port: 0, JetStream: true, APILevel: api.Level})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if _, err := js.New(srv, js.Config{StoreDir: "/store", FS: efs, Sync: wal.SyncAlways}); err != nil {
		t.Fatal(err)
	}
	if nc, err = nats.Connect(srv.ClientURL(), quiet); err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	j, _ = jetstream.New(nc)
	if stream, err = j.Stream(ctx, "FULL"); err != nil {
		t.Fatal(err)
	}
	if m, err := stream.GetMsg(ctx, ack.Sequence); err != nil || string(m.Data) != "again" {
		t.Fatalf("message %d after the restart: %v", ack.Sequence, err)
	}
}
