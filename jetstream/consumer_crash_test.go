package jetstream

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// copyTree copies a directory as it is on disk at this moment, which is
// what a kill -9 leaves behind (the process dies, written bytes stay).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConsumerCrashAtLeastOnce takes the store of a running server (sync
// always) right after confirmed acks, as a kill -9 would leave it, and
// starts a new server on it: confirmed acks are kept, and every message not
// acknowledged is delivered again or for the first time: none is lost.
func TestConsumerCrashAtLeastOnce(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{})
	publishN(t, js, "orders.a", 1, 20)
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "d", AckPolicy: njs.AckExplicitPolicy,
		AckWait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fetchAll(t, c, 10, time.Second)
	if len(msgs) != 10 {
		t.Fatalf("fetched %d", len(msgs))
	}
	for _, m := range msgs[:5] {
		if err := m.DoubleAck(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	crashed := Config{StoreDir: t.TempDir()}
	copyTree(t, ts.cfg.StoreDir, crashed.StoreDir)

	ts2 := startServer(t, crashed)
	js2, _ := njs.New(ts2.connect())
	c2, err := js2.Consumer(ctxT(t), "ORDERS", "d")
	if err != nil {
		t.Fatal(err)
	}
	ci := consumerInfo(t, c2)
	if ci.AckFloor.Stream < 5 {
		t.Fatalf("confirmed acks lost: ack floor %+v", ci.AckFloor)
	}
	seen := map[uint64]bool{}
	deadline := time.Now().Add(15 * time.Second)
	for len(seen) < 15 && time.Now().Before(deadline) {
		for _, m := range fetchAll(t, c2, 20, time.Second) {
			md, _ := m.Metadata()
			if md.Sequence.Stream <= 5 {
				t.Fatalf("acknowledged message %d delivered again", md.Sequence.Stream)
			}
			seen[md.Sequence.Stream] = true
			m.Ack()
		}
	}
	for seq := uint64(6); seq <= 20; seq++ {
		if !seen[seq] {
			t.Fatalf("message %d lost after the crash (seen %v)", seq, seen)
		}
	}
}
