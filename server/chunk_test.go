package server

import "testing"

// TestBigChunks: a chunk for one large message has room for it, comes
// from its power-of-two class, and goes back there; chunks beyond the
// largest class are never pooled.
func TestBigChunks(t *testing.T) {
	for _, need := range []int{chunkSize + 1, 100_000, 128 << 10, 128<<10 + 1, 256<<10 + 40, 1 << 20, maxBigChunk} {
		ch := getChunk(need)
		c := cap(ch.b)
		if c < need || c >= 2*need || bigClass(c) < 0 || len(ch.b) != 0 {
			t.Fatalf("need %d: chunk of len %d cap %d (class %d)", need, len(ch.b), c, bigClass(c))
		}
		ch.b = append(ch.b, "data"...)
		putChunk(ch)
		if len(ch.b) != 0 {
			t.Fatalf("need %d: a pooled chunk keeps %d bytes", need, len(ch.b))
		}
	}
	if k := bigClass(2 * chunkSize); k != 0 {
		t.Fatalf("class of %d = %d", 2*chunkSize, k)
	}
	if k := bigClass(maxBigChunk); k != bigClasses-1 {
		t.Fatalf("class of %d = %d", maxBigChunk, k)
	}
	for _, c := range []int{chunkSize, 3 * chunkSize, 2 * maxBigChunk} {
		if k := bigClass(c); k != -1 {
			t.Fatalf("capacity %d is not a large class, got %d", c, k)
		}
	}
	if ch := getChunk(maxBigChunk + 1); cap(ch.b) != maxBigChunk+1 {
		t.Fatalf("oversized chunk cap %d", cap(ch.b))
	}
}
