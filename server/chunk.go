package server

import "sync"

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

// getChunk returns an empty chunk with room for at least need bytes.
func getChunk(need int) *chunk {
	if need > chunkSize {
		return &chunk{b: make([]byte, 0, need)}
	}
	ch := chunkPool.Get().(*chunk)
	if cap(ch.b) < need {
		ch.b = make([]byte, 0, chunkSize)
	}
	return ch
}

// putChunk returns ch to the pool; ch must not be used afterwards.
func putChunk(ch *chunk) {
	if ch == nil || cap(ch.b) < chunkSize || cap(ch.b) > chunkKeep {
		return
	}
	ch.b = ch.b[:0]
	chunkPool.Put(ch)
}
