package server

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestOutboundChunkBoundaries sends messages of sizes around and far past
// the chunk size (empty, tiny, exactly a chunk, several chunks, near max
// payload), with and without headers, to two subscribers: both get every
// message intact and in order.
func TestOutboundChunkBoundaries(t *testing.T) {
	s := startServer(t, Options{})
	sizes := []int{0, 1, 100, chunkSize - 60, chunkSize, chunkSize + 1, 3 * chunkSize, 1 << 19, 1<<20 - 200, 7, copyBelow - 1, copyBelow}
	const rounds = 4
	total := rounds * len(sizes)
	var subs []*nats.Subscription
	for i := 0; i < 2; i++ {
		nc := connect(t, s)
		sub, err := nc.SubscribeSync("big.>")
		if err != nil {
			t.Fatal(err)
		}
		if err := sub.SetPendingLimits(-1, -1); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	body := func(i, size int) []byte {
		b := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		if size >= 8 {
			copy(b, fmt.Sprintf("%08d", i))
		}
		return b
	}
	pub := connect(t, s)
	for i := 0; i < total; i++ {
		size := sizes[i%len(sizes)]
		m := &nats.Msg{Subject: fmt.Sprintf("big.%d", i), Data: body(i, size)}
		if i%3 == 0 {
			m.Header = nats.Header{"N": []string{fmt.Sprint(i)}}
		}
		if err := pub.PublishMsg(m); err != nil {
			t.Fatalf("publish %d (%d bytes): %v", i, size, err)
		}
	}
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	for k, sub := range subs {
		for i := 0; i < total; i++ {
			m, err := sub.NextMsg(10 * time.Second)
			if err != nil {
				t.Fatalf("subscriber %d, message %d: %v", k, i, err)
			}
			if want := fmt.Sprintf("big.%d", i); m.Subject != want {
				t.Fatalf("subscriber %d: got %s, want %s (out of order)", k, m.Subject, want)
			}
			if !bytes.Equal(m.Data, body(i, sizes[i%len(sizes)])) {
				t.Fatalf("subscriber %d, message %d: %d bytes, corrupted", k, i, len(m.Data))
			}
			if i%3 == 0 && m.Header.Get("N") != fmt.Sprint(i) {
				t.Fatalf("subscriber %d, message %d: header %v", k, i, m.Header)
			}
		}
	}
}
