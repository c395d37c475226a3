package server

import (
	"math/bits"
	"sync"
)

// Outbound bytes travel in chunks: a reader frames messages for a receiver
// into a chunk (its stage), hands the whole chunk to the receiver's queue,
// and the receiver's writer returns it to the pool after writing. A chunk
// is owned by exactly one of them at a time, so no bytes are copied between
// framing and the socket.
const (
	chunkSize = 64 << 10 // usual chunk capacity; bigger only for one big message
	chunkKeep = 4 * chunkSize
)

type chunk struct{ b []byte }

var chunkPool = sync.Pool{New: func() any { return &chunk{b: make([]byte, 0, chunkSize)} }}

// Chunks for one large message come from pools by power-of-two capacity,
// from 2*chunkSize up to maxBigChunk: a stream of 256 KiB messages would
// otherwise allocate (and the runtime clear, and later return to the OS) a
// new buffer per message and receiver. Larger ones are allocated each time.
const (
	bigClasses  = 8
	maxBigChunk = chunkSize << bigClasses // 16 MiB
)

var bigPools [bigClasses]sync.Pool

// bigClass returns the pool index of a chunk of capacity c, or -1 if c is
// not a pooled large capacity.
func bigClass(c int) int {
	if c <= chunkSize || c > maxBigChunk || c&(c-1) != 0 {
		return -1
	}
	return bits.Len(uint(c/chunkSize)) - 2 // 2*chunkSize -> 0
}

// getChunk returns an empty chunk with room for at least need bytes.
func getChunk(need int) *chunk {
	if need > chunkSize {
		if need > maxBigChunk {
			return &chunk{b: make([]byte, 0, need)}
		}
		c := 1 << bits.Len(uint(need-1)) // need rounded up to a power of two
		if v := bigPools[bigClass(c)].Get(); v != nil {
			return v.(*chunk)
		}
		return &chunk{b: make([]byte, 0, c)}
	}
	ch := chunkPool.Get().(*chunk)
	if cap(ch.b) < need {
		ch.b = make([]byte, 0, chunkSize)
	}
	return ch
}

// putChunk returns ch to the pool; ch must not be used afterwards.
func putChunk(ch *chunk) {
	if ch == nil {
		return
	}
	if k := bigClass(cap(ch.b)); k >= 0 {
		ch.b = ch.b[:0]
		bigPools[k].Put(ch)
		return
	}
	if cap(ch.b) < chunkSize || cap(ch.b) > chunkKeep {
		return
	}
	ch.b = ch.b[:0]
	chunkPool.Put(ch)
}
