package api

import "time"

// Advisories and metrics JetStream publishes as things happen, in
// nats-server's subjects and JSON schema types (server/jetstream_events.go
// and jetstream_api.go of nats-server 2.15.2). Subscribers such as `nats
// event`, the JavaScript client's tests and dead-letter tooling read them.

// Advisory and metric subject prefixes. The stream name and, for consumer
// events, the consumer name follow as tokens.
const (
	AdvisoryPrefix = "$JS.EVENT.ADVISORY"
	MetricPrefix   = "$JS.EVENT.METRIC"

	SubjAdvisoryAPI              = "$JS.EVENT.ADVISORY.API"
	SubjAdvisoryStreamCreated    = "$JS.EVENT.ADVISORY.STREAM.CREATED."   // + stream
	SubjAdvisoryStreamDeleted    = "$JS.EVENT.ADVISORY.STREAM.DELETED."   // + stream
	SubjAdvisoryStreamUpdated    = "$JS.EVENT.ADVISORY.STREAM.UPDATED."   // + stream
	SubjAdvisoryConsumerCreated  = "$JS.EVENT.ADVISORY.CONSUMER.CREATED." // + stream.consumer
	SubjAdvisoryConsumerDeleted  = "$JS.EVENT.ADVISORY.CONSUMER.DELETED." // + stream.consumer
	SubjAdvisoryMaxDeliveries    = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."
	SubjAdvisoryMsgNaked         = "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED."
	SubjAdvisoryMsgTerminated    = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED."
	SubjMetricConsumerAck        = "$JS.EVENT.METRIC.CONSUMER.ACK."
	SubjAdvisoryConsumerPinned   = "$JS.EVENT.ADVISORY.CONSUMER.PINNED."   // + stream.consumer
	SubjAdvisoryConsumerUnpinned = "$JS.EVENT.ADVISORY.CONSUMER.UNPINNED." // + stream.consumer
)

// Schema types, the "type" field of each event.
const (
	TypeAdvisoryAPIAudit         = "io.nats.jetstream.advisory.v1.api_audit"
	TypeAdvisoryStreamAction     = "io.nats.jetstream.advisory.v1.stream_action"
	TypeAdvisoryConsumerAction   = "io.nats.jetstream.advisory.v1.consumer_action"
	TypeAdvisoryMaxDeliver       = "io.nats.jetstream.advisory.v1.max_deliver"
	TypeAdvisoryNak              = "io.nats.jetstream.advisory.v1.nak"
	TypeAdvisoryTerminated       = "io.nats.jetstream.advisory.v1.terminated"
	TypeMetricConsumerAck        = "io.nats.jetstream.metric.v1.consumer_ack"
	TypeAdvisoryConsumerPinned   = "io.nats.jetstream.advisory.v1.consumer_group_pinned"
	TypeAdvisoryConsumerUnpinned = "io.nats.jetstream.advisory.v1.consumer_group_unpinned"
)

// Action is what a stream or consumer action advisory reports.
type Action string

// Actions, as nats-server names them.
const (
	ActionCreate Action = "create"
	ActionDelete Action = "delete"
	ActionModify Action = "modify"
)

// TypedEvent starts every advisory: its schema type, a unique id (a NUID)
// and when it happened (UTC).
type TypedEvent struct {
	Type string    `json:"type"`
	ID   string    `json:"id"`
	Time time.Time `json:"timestamp"`
}

// ClientInfo describes the client behind an API request, in the field
// names of nats-server's ClientInfo (those jetwal knows).
type ClientInfo struct {
	Start   *time.Time `json:"start,omitempty"`
	Host    string     `json:"host,omitempty"`
	ID      uint64     `json:"id,omitempty"`
	Account string     `json:"acc,omitempty"`
	User    string     `json:"user,omitempty"`
	Name    string     `json:"name,omitempty"`
	Lang    string     `json:"lang,omitempty"`
	Version string     `json:"ver,omitempty"`
	Server  string     `json:"server,omitempty"`
	Kind    string     `json:"kind,omitempty"`
	Type    string     `json:"client_type,omitempty"`
}

// APIAudit is published on SubjAdvisoryAPI for every API request answered:
// the request and the response as sent.
type APIAudit struct {
	TypedEvent
	Server   string      `json:"server"`
	Client   *ClientInfo `json:"client"`
	Subject  string      `json:"subject"`
	Request  string      `json:"request,omitempty"`
	Response string      `json:"response"`
	Domain   string      `json:"domain,omitempty"`
}

// StreamAction reports a stream created, updated (modify) or deleted.
type StreamAction struct {
	TypedEvent
	Stream string `json:"stream"`
	Action Action `json:"action"`
	Domain string `json:"domain,omitempty"`
}

// ConsumerAction reports a consumer created or deleted.
type ConsumerAction struct {
	TypedEvent
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	Action   Action `json:"action"`
	Domain   string `json:"domain,omitempty"`
}

// MaxDeliverExceeded reports a message that reached the consumer's
// max_deliver and will not be delivered again.
type MaxDeliverExceeded struct {
	TypedEvent
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
	Domain     string `json:"domain,omitempty"`
}

// DeliveryNak reports a -NAK of a pending message.
type DeliveryNak struct {
	TypedEvent
	Stream      string `json:"stream"`
	Consumer    string `json:"consumer"`
	ConsumerSeq uint64 `json:"consumer_seq"`
	StreamSeq   uint64 `json:"stream_seq"`
	Deliveries  uint64 `json:"deliveries"`
	Domain      string `json:"domain,omitempty"`
}

// DeliveryTerminated reports a +TERM, with the reason the client gave.
type DeliveryTerminated struct {
	TypedEvent
	Stream      string `json:"stream"`
	Consumer    string `json:"consumer"`
	ConsumerSeq uint64 `json:"consumer_seq"`
	StreamSeq   uint64 `json:"stream_seq"`
	Deliveries  uint64 `json:"deliveries"`
	Reason      string `json:"reason,omitempty"`
	Domain      string `json:"domain,omitempty"`
}

// ConsumerAckMetric is a sampled ack (sample_freq): how long the message
// waited for it, in nanoseconds since its last delivery.
type ConsumerAckMetric struct {
	TypedEvent
	Stream      string `json:"stream"`
	Consumer    string `json:"consumer"`
	ConsumerSeq uint64 `json:"consumer_seq"`
	StreamSeq   uint64 `json:"stream_seq"`
	Delay       int64  `json:"ack_time"`
	Deliveries  uint64 `json:"deliveries"`
	Domain      string `json:"domain,omitempty"`
}

// ConsumerGroupPinned reports a client pinned in a priority group.
type ConsumerGroupPinned struct {
	TypedEvent
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	Domain   string `json:"domain,omitempty"`
	Group    string `json:"group"`
	PinnedID string `json:"pinned_id"`
}

// ConsumerGroupUnpinned reports a pin lost ("timeout" or "admin").
type ConsumerGroupUnpinned struct {
	TypedEvent
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	Domain   string `json:"domain,omitempty"`
	Group    string `json:"group"`
	Reason   string `json:"reason"`
}
