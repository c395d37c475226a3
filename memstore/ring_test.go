package memstore

import (
	"math/rand/v2"
	"testing"
)

// TestRing drives the block deque with random pushes and pops across many
// block boundaries and compares it with a plain slice.
func TestRing(t *testing.T) {
	var r ring
	var model []int64
	rng := rand.New(rand.NewPCG(3, 4))
	next := int64(1)
	for i := 0; i < 200_000; i++ {
		switch p := rng.IntN(100); {
		case p < 55 || len(model) == 0:
			r.push(entry{ts: next})
			model = append(model, next)
			next++
		case p < 80:
			r.popFront()
			model = model[1:]
		case p < 99:
			r.popBack()
			model = model[:len(model)-1]
		default:
			r.reset()
			model = model[:0]
		}
		if r.len() != len(model) {
			t.Fatalf("op %d: len %d, want %d", i, r.len(), len(model))
		}
		if len(model) == 0 {
			continue
		}
		if r.front().ts != model[0] || r.back().ts != model[len(model)-1] {
			t.Fatalf("op %d: ends %d..%d, want %d..%d", i, r.front().ts, r.back().ts, model[0], model[len(model)-1])
		}
		if k := rng.IntN(len(model)); r.at(k).ts != model[k] {
			t.Fatalf("op %d: at(%d) = %d, want %d", i, k, r.at(k).ts, model[k])
		}
		if want := (r.off+r.n-1)/blockSize + 1; len(r.blocks) != want {
			t.Fatalf("op %d: %d blocks for off %d n %d, want %d", i, len(r.blocks), r.off, r.n, want)
		}
	}
}
