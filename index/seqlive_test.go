package index

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestNextPrevLiveAgainstBits: a block's word-at-a-time scans for the
// next and previous live entry agree with a bit-by-bit walk of the
// deletion bitmap, for lengths that end inside a word, bitmaps shorter
// than the block (entries past them are live), runs of deleted words, and
// every starting entry.
func TestNextPrevLiveAgainstBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(700)
		b := &block{base: 1000, n: n}
		density := rng.Float64()
		head := rng.IntN(n + 1) // entries below head all deleted, as evictions leave them
		var dels []int
		for i := 0; i < n; i++ {
			if i < head || rng.Float64() < density {
				dels = append(dels, i)
			}
		}
		if trial%2 == 0 { // in any order: markDeleted keeps lo either way
			rng.Shuffle(len(dels), func(i, j int) { dels[i], dels[j] = dels[j], dels[i] })
		}
		for _, i := range dels {
			b.markDeleted(i)
		}
		if trial%5 == 0 && len(b.del) > 1 {
			// A bitmap that stops short (entries past it are live), read
			// back as a checkpoint's is.
			enc := binary.LittleEndian.AppendUint32(nil, uint32(len(b.del)-1))
			for _, x := range b.del[:len(b.del)-1] {
				enc = binary.LittleEndian.AppendUint64(enc, x)
			}
			b.del, b.ndel, b.lo = nil, 0, 0
			r := &reader{b: enc}
			if r.deletions(b); r.err != nil {
				t.Fatal(r.err)
			}
		}
		for i := 0; i < n; i++ {
			next := i
			for next < n && b.deleted(next) {
				next++
			}
			if got := b.nextLive(i); got != next {
				t.Fatalf("n %d, %d deleted: nextLive(%d) = %d, want %d", n, b.ndel, i, got, next)
			}
			prev := i
			for prev >= 0 && b.deleted(prev) {
				prev--
			}
			if got := b.prevLive(i); got != prev {
				t.Fatalf("n %d, %d deleted: prevLive(%d) = %d, want %d", n, b.ndel, i, got, prev)
			}
		}
	}
}
