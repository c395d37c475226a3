package apiserver

import (
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Ops is what the handlers call: one operation per request, given the
// decoded request, returning what the reply carries or the API error to
// answer with. *jetstream.JetStream implements it; a clustered JetStream
// decides inside each operation how the cluster serves it (through the
// meta group, or on the stream's leader).
type Ops interface {
	Replier
	StreamOps
	MsgOps
	ConsumerOps
	ClusterOps
	SnapshotOps
}

// Replier sends an encoded reply to a request: it counts it in the API
// stats (an error reply as an error), publishes it to the request's reply
// subject and audits it.
type Replier interface {
	SendReply(r *Request, b []byte, failed bool)
}

// StreamOps are the operations on the account and its streams.
type StreamOps interface {
	// AccountInfo returns the account's usage, limits and API stats.
	AccountInfo() *api.AccountStats
	// CreateStream creates a stream of a checked config, or finds the
	// same one; created says which.
	CreateStream(cfg api.StreamConfig) (info *api.StreamInfo, created bool, aerr *api.ApiError)
	// UpdateStream changes a stream's config to a checked one.
	UpdateStream(cfg api.StreamConfig) (*api.StreamInfo, *api.ApiError)
	// StreamInfo describes the stream name as req asks; paged is the page
	// of per-subject counts when req filters subjects.
	StreamInfo(name string, req api.StreamInfoRequest) (info *api.StreamInfo, paged api.Paged, aerr *api.ApiError)
	// DeleteStream deletes the stream name.
	DeleteStream(name string) *api.ApiError
	// PurgeStream removes the messages of the stream name req selects.
	PurgeStream(name string, req api.StreamPurgeRequest) (purged uint64, aerr *api.ApiError)
	// StreamNamesPage lists the names of the streams req selects, one page.
	StreamNamesPage(req api.StreamNamesRequest) (names []string, paged api.Paged, aerr *api.ApiError)
	// StreamListPage lists the infos of the streams req selects, one page
	// (never nil).
	StreamListPage(req api.StreamNamesRequest) (infos []*api.StreamInfo, paged api.Paged, aerr *api.ApiError)
}

// MsgOps are the operations on one message of a stream.
type MsgOps interface {
	// GetMsg reads the message of the stream name that req selects.
	GetMsg(name string, req *api.MsgGetRequest) (*api.StoredMsg, *api.ApiError)
	// DeleteMsg removes (and erases, unless req says not to) a message of
	// the stream name.
	DeleteMsg(name string, req api.MsgDeleteRequest) *api.ApiError
}

// ConsumerOps are the operations on the consumers of a stream. A stream or
// consumer that does not exist is an error of the operation.
type ConsumerOps interface {
	// CreateConsumer creates or updates a consumer of the stream with the
	// config of req, already checked against its subject's names.
	CreateConsumer(stream string, req api.CreateConsumerRequest) (*api.ConsumerInfo, *api.ApiError)
	// ConsumerInfo describes a consumer.
	ConsumerInfo(stream, consumer string) (*api.ConsumerInfo, *api.ApiError)
	// DeleteConsumer deletes a consumer.
	DeleteConsumer(stream, consumer string) *api.ApiError
	// ConsumerNamesPage lists the names of a stream's consumers, one page
	// (never nil).
	ConsumerNamesPage(stream string, req api.PagedRequest) (names []string, paged api.Paged, aerr *api.ApiError)
	// ConsumerListPage lists the infos of a stream's consumers, one page
	// (never nil).
	ConsumerListPage(stream string, req api.PagedRequest) (infos []*api.ConsumerInfo, paged api.Paged, aerr *api.ApiError)
	// PauseConsumer pauses a consumer until the given time (zero: resumes
	// it) and returns the pause's state.
	PauseConsumer(stream, consumer string, until time.Time) (paused bool, remaining time.Duration, aerr *api.ApiError)
	// UnpinConsumer takes the pin from the pinned client of a consumer's
	// priority group (a valid group name).
	UnpinConsumer(stream, consumer, group string) *api.ApiError
	// ResetConsumer moves a consumer to stream sequence seq (0: its ack
	// floor + 1) and returns its info and the sequence delivery restarts at.
	ResetConsumer(stream, consumer string, seq uint64) (info *api.ConsumerInfo, resetSeq uint64, aerr *api.ApiError)
}

// ClusterOps are the operations only a cluster has (registered when
// Config.Clustered is set). A step-down's body error (DecodeStepDown) is
// the operation's to report, once the stream and consumer are found, where
// nats-server reports it.
type ClusterOps interface {
	// StepDownStream moves the leadership of a stream's group to another
	// member, the one req's placement picks if it names one.
	StepDownStream(stream string, req api.LeaderStepDownRequest, bodyErr *api.ApiError) *api.ApiError
	// StepDownConsumer moves the leadership of a consumer: its stream's.
	StepDownConsumer(stream, consumer string, req api.LeaderStepDownRequest, bodyErr *api.ApiError) *api.ApiError
	// RemovePeer moves a stream's replica off the server peer.
	RemovePeer(stream, peer string) *api.ApiError
}

// SnapshotOps are the two operations that move a stream's archive. Each
// returns what its reply carries and start, which the handler calls once
// the reply is out: the archive's transfer follows the reply. client is
// the requesting client's id, for the advisories.
type SnapshotOps interface {
	// SnapshotStream captures the stream name as req asks; start sends
	// the archive in chunks to req's deliver subject. bodyErr, the
	// request body's decoding error, is the operation's to report once
	// the stream is found, where nats-server reports it.
	SnapshotStream(name string, req api.StreamSnapshotRequest, bodyErr *api.ApiError, client uint64) (cfg *api.StreamConfig, state *api.StreamState, start func(), aerr *api.ApiError)
	// RestoreStream prepares the restore of a stream of a checked config
	// and returns the subject its archive's chunks go to; start receives
	// them and builds the stream.
	RestoreStream(cfg api.StreamConfig, client uint64) (deliverSubject string, start func(), aerr *api.ApiError)
}
