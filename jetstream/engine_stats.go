package jetstream

import (
	"sort"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/wal"
)

// EngineStats is a snapshot of the storage engine's own figures, for
// monitoring (/metrics): the counters every file stream adds to, and each
// stream's files and consumers. It is read at scrape time and costs a lock
// round per stream and per consumer.
type EngineStats struct {
	WAL     wal.MetricsSnapshot // appends, fsyncs and their latency, messages per fsync
	Streams []StreamEngineStats // by name
}

// StreamEngineStats are one stream's figures.
type StreamEngineStats struct {
	Name    string
	Storage string // "file" or "memory"
	LastSeq uint64 // last sequence stored
	// Files describes the stream's segment files; nil for a memory stream.
	Files     *wal.Stats
	Consumers []ConsumerEngineStats // by name
}

// ConsumerEngineStats are one consumer's positions.
type ConsumerEngineStats struct {
	Name string
	// AckFloor is the stream sequence at and below which every message is
	// acknowledged; Delivered the highest stream sequence delivered.
	AckFloor, Delivered uint64
	// AckPending are the messages delivered and awaiting an ack.
	AckPending int
}

// AckFloorLag is how far the consumer's ack floor is behind the stream's
// last message: the messages it has not finished with, delivered or not.
func (c ConsumerEngineStats) AckFloorLag(lastSeq uint64) uint64 {
	if lastSeq <= c.AckFloor {
		return 0
	}
	return lastSeq - c.AckFloor
}

// EngineStats returns a snapshot of the engine's figures.
func (js *JetStream) EngineStats() EngineStats {
	es := EngineStats{WAL: js.walMetrics.Snapshot()}
	streams := js.streamList()
	sort.Slice(streams, func(i, j int) bool { return streams[i].name < streams[j].name })
	for _, s := range streams {
		ss := StreamEngineStats{Name: s.name, Storage: "file", LastSeq: s.store.State().LastSeq}
		if s.config().Storage == api.MemoryStorage {
			ss.Storage = "memory"
		}
		if w, ok := s.store.(*wal.Store); ok {
			st := w.Stats()
			ss.Files = &st
		}
		for _, c := range s.cons.all() {
			ss.Consumers = append(ss.Consumers, c.engineStats())
		}
		sort.Slice(ss.Consumers, func(i, j int) bool { return ss.Consumers[i].Name < ss.Consumers[j].Name })
		es.Streams = append(es.Streams, ss)
	}
	return es
}

func (c *consumer) engineStats() ConsumerEngineStats {
	cs := ConsumerEngineStats{Name: c.name}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return cs
	}
	c.withState(func(st *consumerstate.State) {
		cs.AckFloor = uint64(st.AckFloor.Stream)
		cs.Delivered = uint64(st.Delivered.Stream)
		cs.AckPending = c.ackPending(st)
	})
	return cs
}
