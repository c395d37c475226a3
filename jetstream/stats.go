package jetstream

import (
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/wal"
)

// Stats is a snapshot of JetStream usage, for monitoring (/jsz).
type Stats struct {
	Streams, Consumers int
	Messages, Bytes    uint64
	Memory, Store      uint64 // bytes held by memory and file streams
	APILevel           int
	APITotal           uint64 // API requests served since start
	APIErrors          uint64 // of which answered with an error

	// LoadErrors are the streams and consumers that failed to load at
	// start, each with its path and reason: a server with any is not
	// healthy, however well it serves the rest.
	LoadErrors []string

	StoreDir            string
	MaxMemory, MaxStore int64 // configured limits; 0 = none
	SyncInterval        time.Duration
	SyncAlways          bool
	Domain              string // the JetStream domain, "" for none

	// Meta is the meta group of clustered JetStream; nil on a single server.
	Meta *MetaStats
}

// MetaStats describes clustered JetStream's meta group as this server sees it.
type MetaStats struct {
	Cluster  string // the cluster's name
	Leader   string // the meta leader's server name, "" during an election
	Size     int    // servers in the group
	Replicas []*api.PeerInfo
}

// Stats returns a snapshot of the streams' usage and the configuration.
func (js *JetStream) Stats() Stats {
	st := Stats{
		APILevel: api.Level, APITotal: js.apiTotal.Load(), APIErrors: js.apiErrors.Load(),
		StoreDir: js.cfg.StoreDir, MaxMemory: js.cfg.MaxMemory, MaxStore: js.cfg.MaxStore,
		SyncAlways: js.cfg.Sync == wal.SyncAlways, SyncInterval: js.cfg.SyncInterval,
		Domain: js.cfg.Domain,
	}
	if js.cl != nil {
		st.Meta = js.metaStats()
	}
	js.mu.RLock()
	for _, err := range js.loadErrs {
		st.LoadErrors = append(st.LoadErrors, err.Error())
	}
	streams := make([]*stream, 0, len(js.streams))
	for _, s := range js.streams {
		streams = append(streams, s)
	}
	js.mu.RUnlock()
	for _, s := range streams {
		state := s.store.State()
		st.Messages += state.Msgs
		st.Bytes += state.Bytes
		if s.config().Storage == api.MemoryStorage {
			st.Memory += state.Bytes
		} else {
			st.Store += state.Bytes
		}
		st.Consumers += s.consumerCount()
	}
	st.Streams = len(streams)
	return st
}
