package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// TestBitRot flips one byte inside a record of an old sealed segment of a
// stopped server's store. The restarted server must log the damaged record
// with its file and byte offset, serve every other message unchanged, and
// answer a get of the damaged sequence with "message not found".
func TestBitRot(t *testing.T) {
	store := t.TempDir()
	port := freePort(t)
	p := startServer(t, store, port)
	nc, err := nats.Connect(p.url, quiet)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ROT", Subjects: []string{"rot.>"}}); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	p.stop(t)

	// The server's segments grow to 64 MiB; lay the stream's messages out again
	// in small segments through the store API so that old sealed segments
	// exist without writing hundreds of megabytes.
	msgs := filepath.Join(store, "jetstream", "$G", "streams", "ROT", "msgs")
	if err := os.RemoveAll(msgs); err != nil {
		t.Fatal(err)
	}
	w, err := wal.Open(msgs, wal.Options{SegmentSize: 8 << 10, Sync: wal.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	want := map[uint64][]byte{}
	for i := 1; i <= n; i++ {
		data := bytes.Repeat([]byte(fmt.Sprintf("m%d.", i)), 30)
		seq, _, err := w.Append(fmt.Sprintf("rot.%d", i%4), nil, data)
		if err != nil {
			t.Fatal(err)
		}
		want[seq] = data
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(msgs, segment.FileName(1, false))
	const victim = 5
	off := recordOffset(t, seg, victim)
	flip(t, seg, off+60)

	p = startServer(t, store, port)
	logLine := fmt.Sprintf("file=%s offset=%d", seg, off)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.logs.String(), logLine) {
		if time.Now().After(deadline) {
			t.Fatalf("server log does not name %q:\n%s", logLine, p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	nc, err = nats.Connect(p.url, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ = jetstream.New(nc)
	stream, err := js.Stream(ctx, "ROT")
	if err != nil {
		t.Fatal(err)
	}
	for q := uint64(1); q <= n; q++ {
		got, err := stream.GetMsg(ctx, q)
		if q == victim {
			if !errors.Is(err, jetstream.ErrMsgNotFound) {
				t.Fatalf("get of the damaged sequence %d: %v (%v)", q, err, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("get %d: %v", q, err)
		}
		if !bytes.Equal(got.Data, want[q]) {
			t.Fatalf("message %d differs", q)
		}
	}
	p.stop(t)
}

// flip inverts one bit of a file's byte at off.
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x08
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func recordOffset(t *testing.T, path string, seq uint64) int64 {
	t.Helper()
	s, err := segment.Open(vfs.Default, path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := int64(-1)
	s.Scan(func(off int64, r *segment.Record) error {
		if r.Seq == seq && !r.Tombstone() {
			at = off
		}
		return nil
	})
	if at < 0 {
		t.Fatalf("sequence %d not in %s", seq, path)
	}
	return at
}
