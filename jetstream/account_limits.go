package jetstream

import "github.com/jetwal/jetwal/jetstream/api"

// Account limits (Config.MaxStreams, MaxConsumers, MaxMemory, MaxStore):
// the limits of the account this JetStream serves, as $JS.API.INFO shows
// them and as stream and consumer creation enforce them, with
// nats-server's error codes (10027 maximum streams, 10026 maximum
// consumers, 10028/10047 memory/storage resources, see checkResources).

// accountLimits is the limits block of $JS.API.INFO: -1 for no limit.
func (js *JetStream) accountLimits() api.AccountLimits {
	l := api.AccountLimits{
		MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1,
		MemoryMaxStreamBytes: -1, StoreMaxStreamBytes: -1,
	}
	if js.cfg.MaxMemory > 0 {
		l.MaxMemory = js.cfg.MaxMemory
	}
	if js.cfg.MaxStore > 0 {
		l.MaxStore = js.cfg.MaxStore
	}
	if js.cfg.MaxStreams > 0 {
		l.MaxStreams = js.cfg.MaxStreams
	}
	if js.cfg.MaxConsumers > 0 {
		l.MaxConsumers = js.cfg.MaxConsumers
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
	js.mu.RLock()
	n := 0
	for _, o := range js.streams {
		n += o.consumerCount()
	}
	js.mu.RUnlock()
	if n >= js.cfg.MaxConsumers {
		return api.NewError(api.ErrMaximumConsumers)
	}
	return nil
}
