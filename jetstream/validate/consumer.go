package validate

import (
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/subject"
)

// Consumer defaults, as nats-server fills them in.
const (
	DefaultAckWait           = 30 * time.Second
	defaultMaxAckPending     = 1000
	DefaultMaxWaiting        = 512
	defaultEphemeralInactive = 5 * time.Second
	minHeartbeat             = 100 * time.Millisecond
	maxConsumerNameLen       = 255
)

// ConsumerDefaults fills in what a create request left out, the way
// nats-server does; limits are the stream's consumer_limits and
// accMaxAckPending the account's max_ack_pending (0 or negative: none).
func ConsumerDefaults(cfg *api.ConsumerConfig, limits api.StreamConsumerLimits, accMaxAckPending int) {
	if cfg.MaxDeliver == 0 || cfg.MaxDeliver < -1 {
		cfg.MaxDeliver = -1
	}
	// As nats-server outside pedantic mode (pedantic.go lists them all):
	// limits below -1 are no limits, negative durations none.
	if cfg.MaxAckPending < -1 {
		cfg.MaxAckPending = -1
	}
	if cfg.Heartbeat < 0 {
		cfg.Heartbeat = 0
	}
	if cfg.InactiveThreshold < 0 {
		cfg.InactiveThreshold = 0
	}
	if cfg.PinnedTTL < 0 {
		cfg.PinnedTTL = 0
	}
	priorityDefaults(cfg)
	if len(cfg.BackOff) > 0 {
		cfg.AckWait = cfg.BackOff[0]
	}
	// As nats-server: the stream's consumer limits are the defaults of
	// every consumer, durable or not, whatever its ack policy (a push
	// consumer with ack_policy none is then refused, see
	// checkConsumerLimits).
	if cfg.MaxAckPending == 0 {
		cfg.MaxAckPending = limits.MaxAckPending
	}
	if cfg.InactiveThreshold == 0 {
		cfg.InactiveThreshold = limits.InactiveThreshold
	}
	if cfg.AckPolicy == api.AckFlowControl {
		// As nats-server outside pedantic mode: a flow control ack policy
		// turns flow control on with the 1s heartbeat its checks require.
		cfg.FlowControl = true
		cfg.Heartbeat = FlowControlAckHeartbeat
	}
	if cfg.AckPolicy != api.AckNone {
		if cfg.AckWait == 0 && cfg.AckPolicy != api.AckFlowControl {
			cfg.AckWait = DefaultAckWait
		}
		if cfg.MaxAckPending == 0 {
			// As nats-server: the default, or the account's limit when lower.
			cfg.MaxAckPending = defaultMaxAckPending
			if accMaxAckPending > 0 && accMaxAckPending < cfg.MaxAckPending {
				cfg.MaxAckPending = accMaxAckPending
			}
		}
	}
	// As nats-server outside pedantic mode: negative request limits are
	// no limits.
	if cfg.MaxWaiting < 0 {
		cfg.MaxWaiting = 0
	}
	if cfg.MaxRequestBatch < 0 {
		cfg.MaxRequestBatch = 0
	}
	if cfg.MaxRequestExpires < 0 {
		cfg.MaxRequestExpires = 0
	}
	if cfg.MaxRequestMaxBytes < 0 {
		cfg.MaxRequestMaxBytes = 0
	}
	if cfg.DeliverSubject == "" && cfg.MaxWaiting == 0 {
		cfg.MaxWaiting = DefaultMaxWaiting
	}
	if cfg.Durable == "" && cfg.InactiveThreshold == 0 {
		cfg.InactiveThreshold = defaultEphemeralInactive
	}
	if cfg.Metadata == nil {
		cfg.Metadata = map[string]string{}
	}
	if cfg.PauseUntil != nil {
		t := cfg.PauseUntil.UTC()
		cfg.PauseUntil = &t
	}
	SetConsumerRequiredLevel(cfg)
}

// ConsumerName reports whether n can name a consumer (and its directory).
func ConsumerName(n string) bool {
	return n != "" && len(n) <= maxConsumerNameLen && !strings.ContainsAny(n, ".*> \t\r\n/\\") && n != "." && n != ".."
}

// Consumer validates a consumer config (defaults applied) against
// its stream and the account's max_ack_pending (0 or negative: none).
func Consumer(cfg *api.ConsumerConfig, scfg *api.StreamConfig, accMaxAckPending int) *api.ApiError {
	for _, n := range []string{cfg.Durable, cfg.Name} {
		if n != "" && !ConsumerName(n) {
			return api.NewError(api.ErrConsumerBadDurableName)
		}
	}
	if cfg.Durable != "" && cfg.Name != "" && cfg.Durable != cfg.Name {
		return api.Errorf(api.ErrConsumerCreate, "consumer name %q and durable name %q must match", cfg.Name, cfg.Durable)
	}
	if cfg.AckPolicy < api.AckNone || cfg.AckPolicy > api.AckFlowControl ||
		cfg.DeliverPolicy < api.DeliverAll || cfg.DeliverPolicy > api.DeliverLastPerSubject ||
		cfg.ReplayPolicy < api.ReplayInstant || cfg.ReplayPolicy > api.ReplayOriginal {
		return api.NewError(api.ErrConsumerInvalidPolicy)
	}
	if aerr := checkPriority(cfg); aerr != nil {
		return aerr
	}
	if aerr := CheckSampleFreq(cfg); aerr != nil {
		return aerr
	}
	switch cfg.DeliverPolicy {
	case api.DeliverByStartSequence:
		if cfg.OptStartSeq == 0 || cfg.OptStartTime != nil {
			return api.Errorf(api.ErrConsumerInvalidPolicy, "consumer policy invalid: by_start_sequence requires opt_start_seq only")
		}
	case api.DeliverByStartTime:
		if cfg.OptStartTime == nil || cfg.OptStartSeq != 0 {
			return api.Errorf(api.ErrConsumerInvalidPolicy, "consumer policy invalid: by_start_time requires opt_start_time only")
		}
	case api.DeliverLastPerSubject:
		if cfg.OptStartSeq != 0 || cfg.OptStartTime != nil {
			return api.Errorf(api.ErrConsumerInvalidPolicy, "consumer policy invalid: opt_start_seq and opt_start_time need a by_start policy")
		}
		if cfg.FilterSubject == "" && len(cfg.FilterSubjects) == 0 {
			// nats-server's text.
			return api.Errorf(api.ErrConsumerInvalidPolicy, "consumer delivery policy is deliver last per subject, but optional filter subject is not set")
		}
	default:
		if cfg.OptStartSeq != 0 || cfg.OptStartTime != nil {
			return api.Errorf(api.ErrConsumerInvalidPolicy, "consumer policy invalid: opt_start_seq and opt_start_time need a by_start policy")
		}
	}
	if aerr := checkAckFlowControl(cfg); aerr != nil {
		return aerr
	}
	push := cfg.DeliverSubject != ""
	if push {
		if !subject.ValidLiteral(cfg.DeliverSubject) {
			return api.NewError(api.ErrConsumerDeliverToWildcards)
		}
		for _, s := range scfg.Subjects {
			if subject.Overlap(s, cfg.DeliverSubject) {
				return api.Errorf(api.ErrConsumerCreate, "consumer deliver subject forms a cycle")
			}
		}
		if cfg.MaxWaiting != 0 {
			return api.NewError(api.ErrConsumerPushMaxWaiting)
		}
		if cfg.MaxRequestBatch != 0 || cfg.MaxRequestExpires != 0 || cfg.MaxRequestMaxBytes != 0 {
			return api.Errorf(api.ErrConsumerCreate, "consumer in push mode can not set max_batch, max_expires or max_bytes")
		}
	} else {
		if cfg.FlowControl {
			return api.NewError(api.ErrConsumerFCRequiresPush)
		}
		if cfg.Heartbeat != 0 {
			return api.NewError(api.ErrConsumerHBRequiresPush)
		}
		if cfg.DeliverGroup != "" {
			return api.Errorf(api.ErrConsumerCreate, "consumer deliver group requires a push based consumer")
		}
		if cfg.RateLimit > 0 {
			return api.NewError(api.ErrConsumerPullWithRateLimit)
		}
		if cfg.MaxRequestExpires != 0 && cfg.MaxRequestExpires < time.Millisecond {
			return api.NewError(api.ErrConsumerMaxRequestExpires)
		}
	}
	if cfg.Heartbeat != 0 && cfg.Heartbeat < minHeartbeat {
		return api.NewError(api.ErrConsumerSmallHeartbeat)
	}
	if cfg.FlowControl && cfg.Heartbeat == 0 {
		return api.Errorf(api.ErrConsumerCreate, "consumer with flow control also needs heartbeats")
	}
	if cfg.MaxDeliver < -1 || cfg.MaxDeliver == 0 {
		return api.Errorf(api.ErrConsumerCreate, "consumer max deliver must be -1 or positive")
	}
	if len(cfg.BackOff) > 0 {
		if cfg.MaxDeliver != -1 && cfg.MaxDeliver <= len(cfg.BackOff) {
			return api.NewError(api.ErrConsumerMaxDeliverBackoff)
		}
		for _, d := range cfg.BackOff {
			if d <= 0 {
				return api.Errorf(api.ErrConsumerCreate, "consumer backoff values must be positive")
			}
		}
	}
	if cfg.AckWait < 0 || cfg.InactiveThreshold < 0 || cfg.MaxAckPending < -1 {
		return api.Errorf(api.ErrConsumerCreate, "consumer ack_wait, inactive_threshold and max_ack_pending can not be negative")
	}
	if aerr := checkConsumerLimits(cfg, scfg.ConsumerLimits, accMaxAckPending); aerr != nil {
		return aerr
	}
	if cfg.FilterSubject != "" && len(cfg.FilterSubjects) > 0 {
		return api.NewError(api.ErrConsumerDuplicateFilters)
	}
	for _, f := range cfg.FilterSubjects {
		if f == "" {
			return api.NewError(api.ErrConsumerEmptyFilter)
		}
	}
	filters := ConsumerFilters(cfg)
	for i, f := range filters {
		if !subject.ValidFilter(f) {
			return api.Errorf(api.ErrStreamInvalidConfig, "invalid subject") // as nats-server
		}
		// A filter need not overlap the stream's subjects: nats-server 2.15
		// accepts one that never matches (it no longer sends 10093).
		// As nats-server 2.15: two filters may share subjects (a.*.c and
		// a.b.*), but one may not contain the other (a.> and a.b).
		for _, g := range filters[i+1:] {
			if subject.SubsetOf(f, g) || subject.SubsetOf(g, f) {
				return api.NewError(api.ErrConsumerOverlappingFilters)
			}
		}
	}
	if scfg.Retention == api.WorkQueueRetention {
		if cfg.AckPolicy != api.AckExplicit && cfg.AckPolicy != api.AckFlowControl {
			return api.NewError(api.ErrConsumerWQRequiresExplicitAck)
		}
		if cfg.DeliverPolicy != api.DeliverAll {
			return api.NewError(api.ErrConsumerWQNotDeliverAll)
		}
	}
	return nil
}

// FlowControlAckHeartbeat is the idle heartbeat a flow control ack policy
// consumer must have (nats-server's sourceHealthHB).
const FlowControlAckHeartbeat = time.Second

// checkAckFlowControl applies nats-server's rules for ack_policy
// flow_control (ADR-60): a push consumer with flow control, a 1s heartbeat
// and max_ack_pending, and no ack_wait, backoff or max_deliver.
func checkAckFlowControl(cfg *api.ConsumerConfig) *api.ApiError {
	if cfg.AckPolicy != api.AckFlowControl {
		return nil
	}
	switch {
	case cfg.DeliverSubject == "":
		return api.NewError(api.ErrConsumerAckFCRequiresPush)
	case !cfg.FlowControl:
		return api.NewError(api.ErrConsumerAckFCRequiresFC)
	case cfg.Heartbeat != FlowControlAckHeartbeat:
		return InvalidConfig("flow control ack policy heartbeat needs to be 1s")
	case cfg.MaxAckPending <= 0:
		return api.NewError(api.ErrConsumerAckFCRequiresMaxAckPending)
	case cfg.AckWait != 0 || len(cfg.BackOff) > 0:
		return api.NewError(api.ErrConsumerAckFCRequiresNoAckWait)
	case cfg.MaxDeliver > 0:
		return api.NewError(api.ErrConsumerAckFCRequiresNoMaxDeliver)
	}
	return nil
}

// ConsumerFilters returns the consumer's filter subjects; none means the
// whole stream ("" and ">" count as none).
func ConsumerFilters(cfg *api.ConsumerConfig) []string {
	var out []string
	add := func(f string) {
		if f != "" && f != ">" {
			out = append(out, f)
		}
	}
	add(cfg.FilterSubject)
	for _, f := range cfg.FilterSubjects {
		if f == ">" {
			return nil
		}
		add(f)
	}
	if cfg.FilterSubject == ">" {
		return nil
	}
	return out
}

// ConsumerUpdate refuses changes nats-server does not allow on an
// existing consumer.
func ConsumerUpdate(old, cfg *api.ConsumerConfig) *api.ApiError {
	bad := func(what string) *api.ApiError {
		return api.Errorf(api.ErrConsumerCreate, "%s can not be updated", what)
	}
	switch {
	case old.DeliverPolicy != cfg.DeliverPolicy:
		return bad("deliver policy")
	case old.OptStartSeq != cfg.OptStartSeq || !sameTime(old.OptStartTime, cfg.OptStartTime):
		return bad("start position")
	case old.AckPolicy != cfg.AckPolicy:
		return bad("ack policy")
	case old.ReplayPolicy != cfg.ReplayPolicy:
		return bad("replay policy")
	case old.MemoryStorage != cfg.MemoryStorage:
		return bad("mem_storage")
	case (old.DeliverSubject == "") != (cfg.DeliverSubject == ""):
		return bad("push or pull mode")
	case old.DeliverGroup != cfg.DeliverGroup:
		return bad("deliver group")
	case old.FlowControl != cfg.FlowControl:
		return bad("flow control")
	}
	return nil
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// checkConsumerLimits checks a consumer (defaults applied) against the
// account's max_ack_pending and its stream's consumer_limits, with
// nats-server's errors and in its order. As nats-server's, the checks are
// of a positive max_ack_pending: -1 (none) passes them.
func checkConsumerLimits(cfg *api.ConsumerConfig, limits api.StreamConsumerLimits, accMaxAckPending int) *api.ApiError {
	if cfg.DeliverSubject != "" && cfg.MaxAckPending > 0 && cfg.AckPolicy == api.AckNone {
		return api.NewError(api.ErrConsumerMaxPendingAckPolicy)
	}
	if accMaxAckPending > 0 && cfg.MaxAckPending > accMaxAckPending {
		return api.Errorf(api.ErrConsumerMaxPendingAckExcess, "consumer max ack pending exceeds system limit of %d", accMaxAckPending)
	}
	if limits.MaxAckPending > 0 && cfg.MaxAckPending > limits.MaxAckPending {
		return api.Errorf(api.ErrConsumerMaxPendingAckExcess, "consumer max ack pending exceeds system limit of %d", limits.MaxAckPending)
	}
	if limits.InactiveThreshold > 0 && cfg.InactiveThreshold > limits.InactiveThreshold {
		return api.Errorf(api.ErrConsumerInactiveExcess, "consumer inactive threshold exceeds system limit of %v", limits.InactiveThreshold)
	}
	return nil
}
