package validate

import (
	"github.com/jetwal/jetwal/jetstream/api"
)

// Pedantic mode: a create or update request with "pedantic": true asks the
// server to refuse a config it would otherwise adjust silently (clamp a
// negative limit, fill in a default that differs from what was sent). As
// nats-server 2.15, each such adjustment is refused with 10157
// "pedantic mode: <what>". The checks run on the request as sent, before
// the defaults are applied.

func pedanticError(what string) *api.ApiError {
	return api.Errorf(api.ErrPedantic, "pedantic mode: %s", what)
}

// PedanticStream returns the first adjustment Stream would make to
// a stream config, as an error.
func PedanticStream(cfg *api.StreamConfig) *api.ApiError {
	for _, l := range []struct {
		v    int64
		name string
	}{
		{cfg.MaxMsgs, "max_msgs"}, {cfg.MaxMsgsPer, "max_msgs_per_subject"}, {cfg.MaxBytes, "max_bytes"},
		{int64(cfg.MaxMsgSize), "max_msg_size"}, {int64(cfg.MaxConsumers), "max_consumers"},
	} {
		if l.v < -1 {
			return pedanticError(l.name + " must be set to -1")
		}
	}
	if cfg.Duplicates == 0 && len(cfg.Mirror) == 0 && len(cfg.Sources) == 0 &&
		cfg.MaxAge > 0 && cfg.MaxAge < DefaultDuplicateWindow {
		return pedanticError("duplicate window cannot be bigger than max age")
	}
	if aerr := pedanticMarkers(cfg); aerr != nil { // stream_markers_config.go
		return aerr
	}
	if aerr := pedanticSchedules(cfg); aerr != nil { // schedules.go
		return aerr
	}
	if rp := cfg.RePublish; rp != nil {
		if rp.Source == "" {
			return pedanticError("republish source can not be empty")
		}
		if rp.Source == ">" && rp.Destination == ">" && cfg.SubjectTransform != nil &&
			len(cfg.Subjects) == 1 && cfg.SubjectTransform.Source == cfg.Subjects[0] {
			return pedanticError("implicit republish based on subject transform")
		}
	}
	return nil
}

// PedanticConsumer returns the first adjustment ConsumerDefaults would make
// to a consumer config, as an error. limits are the stream's consumer
// limits.
func PedanticConsumer(cfg *api.ConsumerConfig, limits api.StreamConsumerLimits) *api.ApiError {
	switch {
	case cfg.MaxDeliver < -1:
		return pedanticError("max_deliver must be set to -1")
	case cfg.MaxWaiting < 0:
		return pedanticError("max_waiting must not be negative")
	case cfg.MaxAckPending < -1:
		return pedanticError("max_ack_pending must be set to -1")
	case cfg.MaxRequestBatch < 0:
		return pedanticError("max_batch must not be negative")
	case cfg.MaxRequestExpires < 0:
		return pedanticError("max_expires must not be negative")
	case cfg.MaxRequestMaxBytes < 0:
		return pedanticError("max_bytes must not be negative")
	case cfg.Heartbeat < 0:
		return pedanticError("idle_heartbeat must not be negative")
	case cfg.InactiveThreshold < 0:
		return pedanticError("inactive_threshold must not be negative")
	case cfg.PinnedTTL < 0:
		return pedanticError("priority_timeout must not be negative")
	case len(cfg.BackOff) > 0 && cfg.AckWait != cfg.BackOff[0]:
		return pedanticError("first backoff value has to equal batch AckWait")
	case cfg.MaxAckPending == 0 && limits.MaxAckPending > 0:
		return pedanticError("max_ack_pending must be set if it's configured in stream limits")
	case cfg.InactiveThreshold == 0 && limits.InactiveThreshold > 0:
		return pedanticError("inactive_threshold must be set if it's configured in stream limits")
	}
	// nats-server sets a flow control ack policy's flow control and
	// heartbeat only outside pedantic mode; in it, the checks that follow
	// the defaults refuse a config without them.
	if cfg.AckPolicy == api.AckFlowControl && cfg.DeliverSubject != "" {
		if !cfg.FlowControl {
			return api.NewError(api.ErrConsumerAckFCRequiresFC)
		}
		if cfg.Heartbeat != FlowControlAckHeartbeat {
			return InvalidConfig("flow control ack policy heartbeat needs to be 1s")
		}
	}
	return nil
}
