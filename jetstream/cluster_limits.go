package jetstream

import (
	"github.com/jetwal/jetwal/jetstream/api"
)

// Account limits in a cluster. An account's streams are spread over the
// servers, so its limits (account_limits.go) count what the meta group
// assigns and what the servers serving the streams report
// (cluster_state.go), not what one server holds:
//
//   - max_streams counts the account's stream assignments (10027);
//   - max_store / max_memory reserve each stream's max_bytes times its
//     replicas (10047/10028), and count as used what every replica
//     stores, as nats-server does (an R3 stream of 1 KiB uses 3 KiB);
//   - max_consumers counts the consumers the streams' servers report.

// checkClusterStreamLimits refuses a stream config (new, or an update of
// the stream named self) beyond the account's limits.
func (js *JetStream) checkClusterStreamLimits(self string, cfg *api.StreamConfig) *api.ApiError {
	all := js.assignments()
	if self == "" && js.cfg.MaxStreams > 0 && len(all) >= js.cfg.MaxStreams {
		return api.NewError(api.ErrMaximumStreams)
	}
	limit, code := js.cfg.AccountMaxStore, api.ErrStorageResourcesExceeded
	if cfg.Storage == api.MemoryStorage {
		limit, code = js.cfg.AccountMaxMemory, api.ErrMemoryResourcesExceeded
	}
	if limit <= 0 || cfg.MaxBytes <= 0 {
		return nil
	}
	reserved := cfg.MaxBytes * int64(max(cfg.Replicas, 1))
	for _, a := range all {
		o := &a.Config
		if o.Name != self && o.Storage == cfg.Storage && o.MaxBytes > 0 {
			reserved = addSat(reserved, o.MaxBytes*int64(max(len(a.Peers), 1)))
		}
	}
	if reserved > limit {
		return api.Errorf(code, "insufficient %s resources: max_bytes %d with %d replicas would reserve %d of the account's %d",
			cfg.Storage, cfg.MaxBytes, max(cfg.Replicas, 1), reserved, limit)
	}
	return nil
}

// clusterConsumerCount is the number of consumers of the account's
// streams, as their servers report them (a stream whose server does not
// answer counts its durable consumers).
func (js *JetStream) clusterConsumerCount() int {
	all := js.assignments()
	infos := js.leaderInfos(all)
	n := 0
	for _, a := range all {
		if info := infos[a.Config.Name]; info != nil {
			n += info.State.Consumers
		} else {
			n += len(js.cl.c.Keys(consumerKeyPrefix + a.Config.Name + "/"))
		}
	}
	return n
}

// measureClusterUsage sets the account's usage to what every replica of
// its streams stores; false before the cluster serves states (while New
// loads the streams), when measureUsage counts the local streams.
func (js *JetStream) measureClusterUsage() bool {
	js.cl.mu.Lock()
	started := js.cl.stopStates != nil
	js.cl.mu.Unlock()
	if !started {
		return false
	}
	all := js.assignments()
	infos := js.leaderInfos(all)
	var mem, file int64
	for _, a := range all {
		b := int64(js.listedInfo(a, infos).State.Bytes) * int64(max(len(a.Peers), 1))
		if a.Config.Storage == api.MemoryStorage {
			mem += b
		} else {
			file += b
		}
	}
	js.usage.mem.Store(mem)
	js.usage.file.Store(file)
	return true
}
