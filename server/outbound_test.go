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

// TestTakeFront checks the writer's bounded take: a prefix of whole chunks
// of at most writeMax bytes (at least one chunk, however big), in order,
// counted as in flight, and never the last chunk while others stay queued.
func TestTakeFront(t *testing.T) {
	mk := func(sizes ...int) *outbound {
		o := &outbound{}
		for i, n := range sizes {
			o.mu.chunks = append(o.mu.chunks, &chunk{b: bytes.Repeat([]byte{byte('a' + i)}, n)})
			o.mu.size += n
		}
		return o
	}
	cases := []struct {
		sizes []int
		want  int // chunks taken
	}{
		{[]int{100}, 1},
		{[]int{writeMax / 2, writeMax / 2, 10}, 2},
		{[]int{writeMax / 2, writeMax/2 + 1, 10}, 1},
		{[]int{3 * writeMax, 10}, 1},     // one chunk past the bound still goes
		{[]int{10, 3 * writeMax, 10}, 1}, // the big one waits for the next write
		{[]int{chunkSize, chunkSize, chunkSize}, 3},
	}
	for _, tc := range cases {
		o := mk(tc.sizes...)
		total := o.mu.size
		var first []byte
		if len(o.mu.chunks) > 0 {
			first = o.mu.chunks[0].b
		}
		taken := o.takeFront(nil)
		if len(taken) != tc.want {
			t.Fatalf("sizes %v: took %d chunks, want %d", tc.sizes, len(taken), tc.want)
		}
		if &taken[0].b[0] != &first[0] {
			t.Fatalf("sizes %v: the first chunk taken is not the queue's first", tc.sizes)
		}
		took := 0
		for i, ch := range taken {
			if len(ch.b) != tc.sizes[i] {
				t.Fatalf("sizes %v: chunk %d has %d bytes, want %d (out of order)", tc.sizes, i, len(ch.b), tc.sizes[i])
			}
			took += len(ch.b)
		}
		if o.mu.inflight != took || o.mu.size != total-took || o.queued() != int64(total) {
			t.Fatalf("sizes %v: inflight %d size %d queued %d, want %d %d %d", tc.sizes, o.mu.inflight, o.mu.size, o.queued(), took, total-took, total)
		}
		if left := len(tc.sizes) - tc.want; len(o.mu.chunks) != left {
			t.Fatalf("sizes %v: %d chunks left, want %d", tc.sizes, len(o.mu.chunks), left)
		} else if left > 0 && len(o.mu.chunks[left-1].b) != tc.sizes[len(tc.sizes)-1] {
			t.Fatalf("sizes %v: the last chunk was taken while others stay queued", tc.sizes)
		}
		if n := len(o.mu.chunks); cap(o.mu.chunks) > n && o.mu.chunks[:n+1][n] != nil {
			t.Fatalf("sizes %v: a taken chunk is still referenced past the queue's end", tc.sizes)
		}
	}
}

// TestStallMark checks where a publisher starts to stall: at 3/4 of a small
// MaxPending, and at stallMarkMax at most, however large MaxPending is.
func TestStallMark(t *testing.T) {
	for _, tc := range []struct{ maxPending, want int64 }{
		{1 << 20, 3 << 18},
		{DefaultMaxPending, stallMarkMax},
		{1 << 30, stallMarkMax},
	} {
		s, err := New(Options{MaxPending: tc.maxPending})
		if err != nil {
			t.Fatal(err)
		}
		if s.stallMark != tc.want {
			t.Fatalf("MaxPending %d: stall mark %d, want %d", tc.maxPending, s.stallMark, tc.want)
		}
	}
}
