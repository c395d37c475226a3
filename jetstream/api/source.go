package api

import "time"

// StreamSource is a stream's mirror or one of its sources.
type StreamSource struct {
	Name              string                   `json:"name"`
	OptStartSeq       uint64                   `json:"opt_start_seq,omitempty"`
	OptStartTime      *time.Time               `json:"opt_start_time,omitempty"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
	External          *ExternalStream          `json:"external,omitempty"`
	// Consumer names a durable push consumer of the origin to source
	// through (ADR-60, durable sourcing); nil: the server's own.
	Consumer *StreamConsumerSource `json:"consumer,omitempty"`
}

// StreamConsumerSource is a mirror's or source's durable consumer: its
// name and deliver subject on the origin stream.
type StreamConsumerSource struct {
	Name           string `json:"name,omitempty"`
	DeliverSubject string `json:"deliver_subject,omitempty"`
}

// ExternalStream names a stream behind another API prefix (another
// account or domain).
type ExternalStream struct {
	APIPrefix     string `json:"api"`
	DeliverPrefix string `json:"deliver"`
}

// StreamSourceInfo is the state of a mirror or source in stream info.
type StreamSourceInfo struct {
	Name              string                   `json:"name"`
	External          *ExternalStream          `json:"external,omitempty"`
	Lag               uint64                   `json:"lag"`
	Active            time.Duration            `json:"active"`
	Error             *ApiError                `json:"error,omitempty"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
}

// The errors of mirror and source configurations (nats-server's codes).
const (
	ErrMirrorWithSources         ErrCode = 10031
	ErrMirrorWithStartSeqAndTime ErrCode = 10032
	ErrMirrorWithSubjects        ErrCode = 10034
	ErrSourceDuplicate           ErrCode = 10140
	ErrSourceInvalidStreamName   ErrCode = 10141
	ErrMirrorInvalidStreamName   ErrCode = 10142
	ErrMirrorWithFirstSeq        ErrCode = 10143
	ErrMirrorWithCounters        ErrCode = 10173
	ErrSourceOverlappingFilters  ErrCode = 10147
	ErrMirrorOverlappingFilters  ErrCode = 10152
	ErrStreamExternalAPIOverlap  ErrCode = 10021
	// Durable sourcing (ADR-60).
	ErrMirrorConsumerCfgInvalid  ErrCode = 10213
	ErrMirrorConsumerRequiresAck ErrCode = 10214
	ErrSourceConsumerCfgInvalid  ErrCode = 10215
	ErrSourceConsumerDuplicate   ErrCode = 10216
	ErrSourceConsumerRequiresAck ErrCode = 10217
	ErrMirrorConsumerSetupFailed ErrCode = 10029
	ErrSourceConsumerSetupFailed ErrCode = 10045
)

// sourceErrors are this file's part of errTable.
var sourceErrors = map[ErrCode]errInfo{
	ErrMirrorWithSources:         {400, "stream mirrors can not also contain other sources"},
	ErrMirrorWithStartSeqAndTime: {400, "stream mirrors can not have both start seq and start time configured"},
	ErrMirrorWithSubjects:        {400, "stream mirrors can not contain subjects"},
	ErrSourceDuplicate:           {400, "duplicate source configuration detected"},
	ErrSourceInvalidStreamName:   {400, "sourced stream name is invalid"},
	ErrMirrorInvalidStreamName:   {400, "mirrored stream name is invalid"},
	ErrMirrorWithFirstSeq:        {400, "stream mirrors can not have first sequence configured"},
	ErrMirrorWithCounters:        {400, "stream mirrors can not also calculate counters"},
	ErrSourceOverlappingFilters:  {400, "source filters can not overlap"},
	ErrMirrorOverlappingFilters:  {400, "mirror subject filters can not overlap"},
	ErrStreamExternalAPIOverlap:  {400, "stream external api prefix overlaps with the JetStream API"},
	ErrMirrorConsumerCfgInvalid:  {400, "stream mirror consumer config is invalid"},
	ErrMirrorConsumerRequiresAck: {400, "stream mirror consumer requires flow control ack policy"},
	ErrSourceConsumerCfgInvalid:  {400, "stream source consumer config is invalid"},
	ErrSourceConsumerDuplicate:   {400, "duplicate stream source consumer detected"},
	ErrSourceConsumerRequiresAck: {400, "stream source consumer requires flow control ack policy"},
	ErrMirrorConsumerSetupFailed: {500, "{err}"},
	ErrSourceConsumerSetupFailed: {500, "{err}"},
}
