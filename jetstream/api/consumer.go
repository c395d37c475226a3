package api

import (
	"encoding/json"
	"time"
)

// Consumer API subjects and response types.
const (
	SubjConsumerCreate        = "$JS.API.CONSUMER.CREATE."         // + stream [+ "." + name [+ "." + filter]]
	SubjConsumerDurableCreate = "$JS.API.CONSUMER.DURABLE.CREATE." // + stream + "." + durable
	SubjConsumerInfo          = "$JS.API.CONSUMER.INFO."           // + stream + "." + name
	SubjConsumerDelete        = "$JS.API.CONSUMER.DELETE."         // + stream + "." + name
	SubjConsumerNames         = "$JS.API.CONSUMER.NAMES."          // + stream
	SubjConsumerList          = "$JS.API.CONSUMER.LIST."           // + stream
	SubjConsumerNext          = "$JS.API.CONSUMER.MSG.NEXT."       // + stream + "." + name
	SubjConsumerPause         = "$JS.API.CONSUMER.PAUSE."          // + stream + "." + name
	SubjConsumerReset         = "$JS.API.CONSUMER.RESET."          // + stream + "." + name

	TypeConsumerCreate = "io.nats.jetstream.api.v1.consumer_create_response"
	TypeConsumerDelete = "io.nats.jetstream.api.v1.consumer_delete_response"
	TypeConsumerPause  = "io.nats.jetstream.api.v1.consumer_pause_response"
	TypeConsumerUnpin  = "io.nats.jetstream.api.v1.consumer_unpin_response"
	TypeConsumerReset  = "io.nats.jetstream.api.v1.consumer_reset_response"
)

// DeliverPolicy is where a new consumer starts in its stream.
type DeliverPolicy int

// Deliver policies, in nats-server's order.
const (
	DeliverAll DeliverPolicy = iota
	DeliverLast
	DeliverNew
	DeliverByStartSequence
	DeliverByStartTime
	DeliverLastPerSubject
)

var deliverNames = []string{"all", "last", "new", "by_start_sequence", "by_start_time", "last_per_subject"}

func (d DeliverPolicy) String() string { return enumName(deliverNames, int(d)) }

// MarshalJSON writes the policy as its nats-server string.
func (d DeliverPolicy) MarshalJSON() ([]byte, error) {
	return marshalEnum("deliver_policy", deliverNames, int(d))
}

// UnmarshalJSON accepts nats-server's names ("undefined" and "" mean all).
func (d *DeliverPolicy) UnmarshalJSON(b []byte) error {
	if string(b) == `""` || string(b) == `"undefined"` {
		*d = DeliverAll
		return nil
	}
	v, err := unmarshalEnum("deliver_policy", deliverNames, b)
	*d = DeliverPolicy(v)
	return err
}

// AckPolicy says which acknowledgements a consumer expects.
type AckPolicy int

// Ack policies, in nats-server's order.
const (
	AckNone AckPolicy = iota
	AckAll
	AckExplicit
	// AckFlowControl (nats-server 2.14, ADR-60): a push consumer whose
	// deliveries are acknowledged, up to a stream sequence, by the answers
	// to its flow control requests; client acks are not taken.
	AckFlowControl
)

var ackNames = []string{"none", "all", "explicit", "flow_control"}

func (a AckPolicy) String() string { return enumName(ackNames, int(a)) }

// MarshalJSON writes "none", "all", "explicit" or "flow_control".
func (a AckPolicy) MarshalJSON() ([]byte, error) { return marshalEnum("ack_policy", ackNames, int(a)) }

// UnmarshalJSON accepts "none", "all", "explicit" and "flow_control".
func (a *AckPolicy) UnmarshalJSON(b []byte) error {
	v, err := unmarshalEnum("ack_policy", ackNames, b)
	*a = AckPolicy(v)
	return err
}

// ReplayPolicy is the pace at which stored messages are delivered.
type ReplayPolicy int

// Replay policies.
const (
	ReplayInstant ReplayPolicy = iota
	ReplayOriginal
)

var replayNames = []string{"instant", "original"}

func (r ReplayPolicy) String() string { return enumName(replayNames, int(r)) }

// MarshalJSON writes "instant" or "original".
func (r ReplayPolicy) MarshalJSON() ([]byte, error) {
	return marshalEnum("replay_policy", replayNames, int(r))
}

// UnmarshalJSON accepts "instant" and "original".
func (r *ReplayPolicy) UnmarshalJSON(b []byte) error {
	v, err := unmarshalEnum("replay_policy", replayNames, b)
	*r = ReplayPolicy(v)
	return err
}

// ConsumerConfig is a consumer's configuration. Field order and omitempty
// follow nats-server's JSON.
type ConsumerConfig struct {
	Durable         string          `json:"durable_name,omitempty"`
	Name            string          `json:"name,omitempty"`
	Description     string          `json:"description,omitempty"`
	DeliverPolicy   DeliverPolicy   `json:"deliver_policy"`
	OptStartSeq     uint64          `json:"opt_start_seq,omitempty"`
	OptStartTime    *time.Time      `json:"opt_start_time,omitempty"`
	AckPolicy       AckPolicy       `json:"ack_policy"`
	AckWait         time.Duration   `json:"ack_wait,omitempty"`
	MaxDeliver      int             `json:"max_deliver,omitempty"`
	BackOff         []time.Duration `json:"backoff,omitempty"`
	FilterSubject   string          `json:"filter_subject,omitempty"`
	FilterSubjects  []string        `json:"filter_subjects,omitempty"`
	ReplayPolicy    ReplayPolicy    `json:"replay_policy"`
	RateLimit       uint64          `json:"rate_limit_bps,omitempty"`
	SampleFrequency string          `json:"sample_freq,omitempty"`
	MaxWaiting      int             `json:"max_waiting,omitempty"`
	MaxAckPending   int             `json:"max_ack_pending,omitempty"`
	FlowControl     bool            `json:"flow_control,omitempty"`
	HeadersOnly     bool            `json:"headers_only,omitempty"`

	MaxRequestBatch    int           `json:"max_batch,omitempty"`
	MaxRequestExpires  time.Duration `json:"max_expires,omitempty"`
	MaxRequestMaxBytes int           `json:"max_bytes,omitempty"`

	DeliverSubject string        `json:"deliver_subject,omitempty"`
	DeliverGroup   string        `json:"deliver_group,omitempty"`
	Heartbeat      time.Duration `json:"idle_heartbeat,omitempty"`

	InactiveThreshold time.Duration `json:"inactive_threshold,omitempty"`

	Replicas      int  `json:"num_replicas"`
	MemoryStorage bool `json:"mem_storage,omitempty"`
	Direct        bool `json:"direct,omitempty"`

	Metadata   map[string]string `json:"metadata,omitempty"`
	PauseUntil *time.Time        `json:"pause_until,omitempty"`

	// Priority groups are accepted and kept; jetwal does not act on them.
	PriorityGroups json.RawMessage `json:"priority_groups,omitempty"`
	PriorityPolicy json.RawMessage `json:"priority_policy,omitempty"`
	PinnedTTL      time.Duration   `json:"priority_timeout,omitempty"`
}

// Clone returns a deep copy of c.
func (c *ConsumerConfig) Clone() ConsumerConfig {
	n := *c
	n.BackOff = append([]time.Duration(nil), c.BackOff...)
	n.FilterSubjects = append([]string(nil), c.FilterSubjects...)
	if len(c.FilterSubjects) == 0 {
		n.FilterSubjects = nil
	}
	if len(c.BackOff) == 0 {
		n.BackOff = nil
	}
	if c.OptStartTime != nil {
		t := *c.OptStartTime
		n.OptStartTime = &t
	}
	if c.PauseUntil != nil {
		t := *c.PauseUntil
		n.PauseUntil = &t
	}
	if c.Metadata != nil {
		n.Metadata = make(map[string]string, len(c.Metadata))
		for k, v := range c.Metadata {
			n.Metadata[k] = v
		}
	}
	n.PriorityGroups = cloneRaw(c.PriorityGroups)
	n.PriorityPolicy = cloneRaw(c.PriorityPolicy)
	return n
}

// CreateConsumerRequest is the body of CONSUMER.CREATE and
// CONSUMER.DURABLE.CREATE.
type CreateConsumerRequest struct {
	Stream   string          `json:"stream_name"`
	Config   *ConsumerConfig `json:"config"`
	Action   string          `json:"action"`
	Pedantic bool            `json:"pedantic,omitempty"`
}

// SequenceInfo is a position of a consumer (delivered or ack floor).
type SequenceInfo struct {
	Consumer uint64     `json:"consumer_seq"`
	Stream   uint64     `json:"stream_seq"`
	Last     *time.Time `json:"last_active,omitempty"`
}

// ConsumerInfo describes a consumer.
type ConsumerInfo struct {
	Stream         string               `json:"stream_name"`
	Name           string               `json:"name"`
	Created        time.Time            `json:"created"`
	Config         *ConsumerConfig      `json:"config,omitempty"`
	Delivered      SequenceInfo         `json:"delivered"`
	AckFloor       SequenceInfo         `json:"ack_floor"`
	NumAckPending  int                  `json:"num_ack_pending"`
	NumRedelivered int                  `json:"num_redelivered"`
	NumWaiting     int                  `json:"num_waiting"`
	NumPending     uint64               `json:"num_pending"`
	Cluster        *ClusterInfo         `json:"cluster,omitempty"`
	PushBound      bool                 `json:"push_bound,omitempty"`
	Paused         bool                 `json:"paused,omitempty"`
	PauseRemaining time.Duration        `json:"pause_remaining,omitempty"`
	TimeStamp      time.Time            `json:"ts"`
	PriorityGroups []PriorityGroupState `json:"priority_groups,omitempty"`
}

// ConsumerInfoResponse answers CONSUMER.INFO and (with TypeConsumerCreate)
// CONSUMER.CREATE.
type ConsumerInfoResponse struct {
	Response
	*ConsumerInfo
}

// ConsumerNamesResponse answers CONSUMER.NAMES.
type ConsumerNamesResponse struct {
	Response
	Paged
	Consumers []string `json:"consumers"`
}

// ConsumerListResponse answers CONSUMER.LIST.
type ConsumerListResponse struct {
	Response
	Paged
	Consumers []*ConsumerInfo `json:"consumers"`
	Missing   []string        `json:"missing,omitempty"`
}

// ConsumerDeleteResponse answers CONSUMER.DELETE.
type ConsumerDeleteResponse struct {
	Response
	Success bool `json:"success,omitempty"`
}

// ConsumerPauseRequest is the body of CONSUMER.PAUSE; a zero (or absent)
// pause_until resumes the consumer.
type ConsumerPauseRequest struct {
	PauseUntil time.Time `json:"pause_until,omitempty"`
}

// ConsumerPauseResponse answers CONSUMER.PAUSE.
type ConsumerPauseResponse struct {
	Response
	Paused         bool          `json:"paused"`
	PauseUntil     time.Time     `json:"pause_until"`
	PauseRemaining time.Duration `json:"pause_remaining,omitempty"`
}

// ConsumerResetRequest is the body of CONSUMER.RESET; an empty body or a
// zero seq resets to the ack floor + 1.
type ConsumerResetRequest struct {
	Seq uint64 `json:"seq,omitempty"`
}

// ConsumerResetResponse answers CONSUMER.RESET: the consumer's info after
// the reset and the stream sequence delivery restarts at (reset_seq is
// present in errors too, as 0).
type ConsumerResetResponse struct {
	Response
	*ConsumerInfo
	ResetSeq uint64 `json:"reset_seq"`
}

// ConsumerUnpinRequest is the body of CONSUMER.UNPIN.
type ConsumerUnpinRequest struct {
	Group string `json:"group"`
}

// NextRequest is the body of CONSUMER.MSG.NEXT (or a bare batch number).
type NextRequest struct {
	Expires   time.Duration `json:"expires,omitempty"`
	Batch     int           `json:"batch,omitempty"`
	MaxBytes  int           `json:"max_bytes,omitempty"`
	NoWait    bool          `json:"no_wait,omitempty"`
	Heartbeat time.Duration `json:"idle_heartbeat,omitempty"`
	// The priority group part (nats-server's PriorityGroup, inline).
	Group         string `json:"group,omitempty"`
	MinPending    int64  `json:"min_pending,omitempty"`
	MinAckPending int64  `json:"min_ack_pending,omitempty"`
	ID            string `json:"id,omitempty"`
	Priority      int    `json:"priority,omitempty"`
	// JSON is set when the request was JSON (not empty, not a bare
	// number): only those take part in priority groups.
	JSON bool `json:"-"`
}

// PriorityGroupState is a priority group in consumer info.
type PriorityGroupState struct {
	Group          string    `json:"group"`
	PinnedClientID string    `json:"pinned_client_id,omitempty"`
	PinnedTS       time.Time `json:"pinned_ts,omitempty"`
}

// Consumer error numbers (nats-server's errors.json).
const (
	ErrConsumerBadDurableName         ErrCode = 10103
	ErrConsumerConfigRequired         ErrCode = 10078
	ErrConsumerCreate                 ErrCode = 10012
	ErrConsumerNameExist              ErrCode = 10013
	ErrConsumerDurableNameNotMatch    ErrCode = 10017
	ErrConsumerDeliverToWildcards     ErrCode = 10079
	ErrConsumerPushMaxWaiting         ErrCode = 10080
	ErrConsumerSmallHeartbeat         ErrCode = 10083
	ErrConsumerFCRequiresPush         ErrCode = 10089
	ErrConsumerHBRequiresPush         ErrCode = 10088
	ErrConsumerFilterNotSubset        ErrCode = 10093
	ErrConsumerInvalidPolicy          ErrCode = 10094
	ErrConsumerWQRequiresExplicitAck  ErrCode = 10098
	ErrConsumerWQMultipleUnfiltered   ErrCode = 10099
	ErrConsumerWQNotUnique            ErrCode = 10100
	ErrConsumerWQNotDeliverAll        ErrCode = 10101
	ErrConsumerMaxDeliverBackoff      ErrCode = 10116
	ErrConsumerFilterMismatch         ErrCode = 10131
	ErrConsumerDuplicateFilters       ErrCode = 10136
	ErrConsumerOverlappingFilters     ErrCode = 10138
	ErrConsumerEmptyFilter            ErrCode = 10139
	ErrConsumerAlreadyExists          ErrCode = 10148
	ErrConsumerDoesNotExist           ErrCode = 10149
	ErrMaximumConsumers               ErrCode = 10026
	ErrConsumerStoreFailed            ErrCode = 10104
	ErrConsumerInvalidPriorityGroup   ErrCode = 10160
	ErrConsumerInvalidGroupName       ErrCode = 10162
	ErrConsumerPolicyWithoutGroup     ErrCode = 10159
	ErrConsumerEmptyGroupName         ErrCode = 10161
	ErrConsumerPushWithPriority       ErrCode = 10178
	ErrConsumerGroupWithPolicyNone    ErrCode = 10196
	ErrConsumerPinnedTTLWithoutPolicy ErrCode = 10197
	ErrConsumerMaxPendingAckPolicy    ErrCode = 10082
	ErrConsumerMaxPendingAckExcess    ErrCode = 10121
	ErrConsumerInactiveExcess         ErrCode = 10153
	ErrConsumerInvalidSampling        ErrCode = 10095
	ErrConsumerPullWithRateLimit      ErrCode = 10086
	ErrConsumerMaxRequestExpires      ErrCode = 10115
)
