package jetstream

import (
	"sort"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Monitoring snapshots of accounts, streams and consumers (the
// account_details of /jsz). They are plain values, built from the same
// reads as STREAM.INFO and CONSUMER.INFO, and share nothing with the live
// objects: a caller may keep or encode them without holding any lock.

// DetailOptions say how deep AccountDetails goes.
type DetailOptions struct {
	Streams   bool // list each stream (StreamDetail)
	Consumers bool // and each stream's consumers; implies Streams
}

// AccountDetail is one account's JetStream usage and, when asked, its
// streams.
type AccountDetail struct {
	Account string
	// Memory and Store are the bytes the account's memory and file streams
	// hold.
	Memory, Store uint64
	// MaxMemory and MaxStore are the account's own JetStream limits
	// (Config.AccountMaxMemory, AccountMaxStore); -1 means none.
	MaxMemory, MaxStore int64
	// APITotal and APIErrors count the account's API requests since start.
	APITotal, APIErrors uint64
	// Streams is nil unless DetailOptions.Streams; sorted by name.
	Streams []StreamDetail
}

// StreamDetail is one stream as /jsz's stream_detail shows it.
type StreamDetail struct {
	Name    string
	Created time.Time
	Cluster *api.ClusterInfo
	Config  api.StreamConfig
	State   api.StreamState
	Mirror  *api.StreamSourceInfo
	Sources []*api.StreamSourceInfo
	// Consumers is nil unless DetailOptions.Consumers; sorted by name.
	Consumers []*api.ConsumerInfo
}

// Account names the account whose streams this JetStream serves.
func (js *JetStream) Account() string { return js.cfg.Account }

// AccountDetails returns the usage of every account this JetStream serves
// (today exactly one, Account()), with its streams and their consumers as
// o asks.
func (js *JetStream) AccountDetails(o DetailOptions) []AccountDetail {
	if o.Consumers {
		o.Streams = true
	}
	d := AccountDetail{
		Account: js.cfg.Account, MaxMemory: js.accountLimits().MaxMemory, MaxStore: js.accountLimits().MaxStore,
		APITotal: js.apiTotal.Load(), APIErrors: js.apiErrors.Load(),
	}
	for _, s := range js.sortedStreams() {
		cfg := s.config()
		st := s.store.State()
		if cfg.Storage == api.MemoryStorage {
			d.Memory += st.Bytes
		} else {
			d.Store += st.Bytes
		}
		if !o.Streams {
			continue
		}
		sd := StreamDetail{
			Name: s.name, Created: s.created.UTC(), Cluster: js.clusterInfo(s), Config: cfg,
			State: apiState(&st, s.consumerCount()),
		}
		sd.Mirror, sd.Sources = s.sourceInfos()
		if o.Consumers {
			for _, c := range s.cons.all() {
				sd.Consumers = append(sd.Consumers, c.info(false))
			}
			sort.Slice(sd.Consumers, func(i, j int) bool { return sd.Consumers[i].Name < sd.Consumers[j].Name })
		}
		d.Streams = append(d.Streams, sd)
	}
	return []AccountDetail{d}
}

// sortedStreams returns the streams sorted by name, read under the lock
// and used after it is released.
func (js *JetStream) sortedStreams() []*stream {
	streams := js.streamList()
	sort.Slice(streams, func(i, j int) bool { return streams[i].name < streams[j].name })
	return streams
}
