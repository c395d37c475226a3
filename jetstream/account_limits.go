package jetstream

import (
	"sync/atomic"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Account limits (Config.MaxStreams, MaxConsumers, AccountMaxMemory,
// AccountMaxStore, AccountMaxAckPending):
// the limits of the account this JetStream serves, as $JS.API.INFO shows
// them and as stream and consumer creation enforce them, with
// nats-server's error codes (10027 maximum streams, 10026 maximum
// consumers, 10028/10047 memory/storage resources, see checkResources;
// 10121 for a consumer's max_ack_pending, see validate.Consumer).
// The bytes stored count against AccountMaxMemory/AccountMaxStore as well: once the
// account's streams of a storage type hold that much, publishes to them
// are refused with 10002 (nats-server's "resource limits exceeded for
// account"). The usage is measured when JetStream starts and then every
// sweepInterval (not per message, to keep the publish path free of it),
// so an account may overshoot by what it publishes within one interval.

// accountUsage is the bytes the account's memory and file streams hold,
// as last measured.
type accountUsage struct {
	mem, file atomic.Int64
}

// measureUsage recomputes the usage from the streams' states.
func (js *JetStream) measureUsage(streams []*stream) {
	if js.cfg.AccountMaxMemory <= 0 && js.cfg.AccountMaxStore <= 0 {
		return
	}
	if js.clustered() && js.measureClusterUsage() {
		return
	}
	var mem, file int64
	for _, s := range streams {
		b := int64(s.store.State().Bytes)
		if s.config().Storage == api.MemoryStorage {
			mem += b
		} else {
			file += b
		}
	}
	js.usage.mem.Store(mem)
	js.usage.file.Store(file)
}

// checkUsage refuses a publish of n bytes into a stream of storage st
// when the account's streams of that storage already hold the limit.
func (js *JetStream) checkUsage(st api.StorageType, n int) *api.ApiError {
	limit, used := js.cfg.AccountMaxStore, &js.usage.file
	if st == api.MemoryStorage {
		limit, used = js.cfg.AccountMaxMemory, &js.usage.mem
	}
	if limit > 0 && used.Load()+int64(n) > limit {
		return api.NewError(api.ErrAccountResourcesExceeded)
	}
	return nil
}

// accountLimits is the limits block of $JS.API.INFO: -1 for no limit.
func (js *JetStream) accountLimits() api.AccountLimits {
	l := api.AccountLimits{
		MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1,
		MemoryMaxStreamBytes: -1, StoreMaxStreamBytes: -1,
	}
	if js.cfg.AccountMaxMemory > 0 {
		l.MaxMemory = js.cfg.AccountMaxMemory
	}
	if js.cfg.AccountMaxStore > 0 {
		l.MaxStore = js.cfg.AccountMaxStore
	}
	if js.cfg.MaxStreams > 0 {
		l.MaxStreams = js.cfg.MaxStreams
	}
	if js.cfg.MaxConsumers > 0 {
		l.MaxConsumers = js.cfg.MaxConsumers
	}
	if js.cfg.AccountMaxAckPending > 0 {
		l.MaxAckPending = js.cfg.AccountMaxAckPending
	}
	return l
}

// checkStreamLimit refuses a new stream beyond MaxStreams. Caller holds
// js.mu.
func (js *JetStream) checkStreamLimit() *api.ApiError {
	if js.cfg.MaxStreams > 0 && len(js.streams) >= js.cfg.MaxStreams {
		return api.NewError(api.ErrMaximumStreams)
	}
	return nil
}

// checkConsumerLimit refuses a new consumer named name on s beyond
// MaxConsumers (all streams' consumers together). An existing consumer of
// that name (an update) is not new.
func (js *JetStream) checkConsumerLimit(s *stream, name string) *api.ApiError {
	if js.cfg.MaxConsumers <= 0 {
		return nil
	}
	for _, c := range s.cons.all() {
		if c.name == name {
			return nil
		}
	}
	n := 0
	if js.clustered() {
		n = js.clusterConsumerCount() // cluster_limits.go
	} else {
		js.mu.RLock()
		for _, o := range js.streams {
			n += o.consumerCount()
		}
		js.mu.RUnlock()
	}
	if n >= js.cfg.MaxConsumers {
		return api.NewError(api.ErrMaximumConsumers)
	}
	return nil
}

// checkAccountReservation refuses a config whose max_bytes, added to the
// other streams' of the same storage, exceeds the account's limit
// (nats-server's 10028/10047, as for the server's limits). Caller holds
// js.mu.
func (js *JetStream) checkAccountReservation(self string, cfg *api.StreamConfig) *api.ApiError {
	return js.checkReservation(self, cfg, js.cfg.AccountMaxStore, js.cfg.AccountMaxMemory, "the account's ")
}

// checkReservation refuses a config whose max_bytes, added to the other
// streams' of the same storage, exceeds that storage's limit (0 or less:
// none); whose names the limit in the error. Caller holds js.mu.
func (js *JetStream) checkReservation(self string, cfg *api.StreamConfig, fileLimit, memLimit int64, whose string) *api.ApiError {
	limit, code := fileLimit, api.ErrStorageResourcesExceeded
	if cfg.Storage == api.MemoryStorage {
		limit, code = memLimit, api.ErrMemoryResourcesExceeded
	}
	if limit <= 0 || cfg.MaxBytes <= 0 {
		return nil
	}
	reserved := cfg.MaxBytes
	for name, o := range js.streams {
		o.cfgMu.RLock()
		if name != self && o.cfg.Storage == cfg.Storage && o.cfg.MaxBytes > 0 {
			reserved = addSat(reserved, o.cfg.MaxBytes)
		}
		o.cfgMu.RUnlock()
	}
	if reserved > limit {
		return api.Errorf(code, "insufficient %s resources: max_bytes %d would reserve %d of %s%d", cfg.Storage, cfg.MaxBytes, reserved, whose, limit)
	}
	return nil
}
