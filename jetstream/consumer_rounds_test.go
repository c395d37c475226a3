package jetstream

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestConsumerRoundBuffersBounded: a pull consumer that delivered large
// messages does not keep a buffer per message of its last round. Rounds
// end after roundBytes, and what the round buffers keep afterwards is at
// most bufsKeep; every message still arrives, in order, intact.
func TestConsumerRoundBuffersBounded(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "BIG", Subjects: []string{"big"}}); err != nil {
		t.Fatal(err)
	}
	const n, size = 24, 256 << 10 // 6 MiB: three times bufsKeep
	payload := func(i int) []byte {
		return bytes.Repeat([]byte{byte('a' + i)}, size)
	}
	for i := range n {
		if _, err := js.Publish("big", payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := js.PullSubscribe("big", "D", nats.AckExplicit())
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for got < n {
		msgs, err := sub.Fetch(n-got, nats.MaxWait(5*time.Second))
		if err != nil {
			t.Fatalf("fetch after %d: %v", got, err)
		}
		for _, m := range msgs {
			if !bytes.Equal(m.Data, payload(got)) {
				t.Fatalf("message %d: %d bytes starting %q", got, len(m.Data), m.Data[:min(4, len(m.Data))])
			}
			m.Ack()
			got++
		}
	}
	c := ts.js.lookup("BIG").cons.get("D")
	kept := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		total := 0
		for _, m := range c.bufs {
			total += cap(m.Header) + cap(m.Data)
		}
		return total
	}
	eventually(t, fmt.Sprintf("round buffers down to %d bytes", bufsKeep), func() bool { return kept() <= bufsKeep })
}
