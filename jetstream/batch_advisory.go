package jetstream

import "github.com/jetwal/jetwal/jetstream/api"

// The advisory nats-server sends when an atomic batch is dropped before its
// commit: on $JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.<stream>, with the
// reason "timeout", "large", "incomplete" or "unsupported".
const (
	subjAdvisoryBatchAbandoned = api.AdvisoryPrefix + ".STREAM.BATCH_ABANDONED."
	typeAdvisoryBatchAbandoned = "io.nats.jetstream.advisory.v1.stream_batch_abandoned"

	abandonTimeout     = "timeout"
	abandonLarge       = "large"
	abandonIncomplete  = "incomplete"
	abandonUnsupported = "unsupported"
)

type batchAbandonedAdvisory struct {
	api.TypedEvent
	Stream  string `json:"stream"`
	Domain  string `json:"domain,omitempty"`
	BatchID string `json:"batch"`
	Reason  string `json:"reason"`
}

// adviseBatchAbandoned reports batch id dropped for reason. Called with no
// lock held.
func (s *stream) adviseBatchAbandoned(id, reason string) {
	subj := subjAdvisoryBatchAbandoned + s.name
	if !s.env.listening(subj) {
		return
	}
	s.env.publishEvent(subj, batchAbandonedAdvisory{TypedEvent: newEvent(typeAdvisoryBatchAbandoned),
		Stream: s.name, Domain: s.env.cfg.Domain, BatchID: id, Reason: reason})
}
