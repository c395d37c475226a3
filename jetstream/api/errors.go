package api

import (
	"fmt"
	"maps"
)

// ErrCode is a nats-server JetStream error number (the "err_code" field).
// Clients such as nats.go and the nats CLI branch on these numbers, so they
// are nats-server's (server/errors.json); jetwal writes its own descriptions.
type ErrCode uint16

// The error numbers jetwal uses.
const (
	ErrAccountResourcesExceeded ErrCode = 10002
	ErrBadRequest               ErrCode = 10003
	ErrClusterRequired          ErrCode = 10010
	ErrConsumerNotFound         ErrCode = 10014
	ErrInsufficientResources    ErrCode = 10023
	ErrInvalidJSON              ErrCode = 10025
	ErrMaximumStreams           ErrCode = 10027
	ErrMemoryResourcesExceeded  ErrCode = 10028
	ErrNoMessageFound           ErrCode = 10037
	ErrNotEmptyRequest          ErrCode = 10038
	ErrNotEnabledForAccount     ErrCode = 10039
	ErrSequenceNotFound         ErrCode = 10043
	ErrStorageResourcesExceeded ErrCode = 10047
	ErrStreamCreate             ErrCode = 10049
	ErrStreamDelete             ErrCode = 10050
	ErrStreamGeneral            ErrCode = 10051
	ErrStreamInvalidConfig      ErrCode = 10052
	ErrPedantic                 ErrCode = 10157
	ErrStreamLimits             ErrCode = 10053
	ErrMessageExceedsMaximum    ErrCode = 10054
	ErrStreamMirrorNotUpdatable ErrCode = 10055
	ErrStreamNameMismatch       ErrCode = 10056
	ErrStreamMsgDeleteFailed    ErrCode = 10057
	ErrStreamNameExist          ErrCode = 10058
	ErrStreamNotFound           ErrCode = 10059
	ErrStreamNotMatch           ErrCode = 10060
	ErrStreamReplicasNotUpdate  ErrCode = 10061
	ErrStreamSubjectOverlap     ErrCode = 10065
	ErrStreamUpdate             ErrCode = 10069
	ErrStreamWrongLastMsgID     ErrCode = 10070
	ErrStreamWrongLastSequence  ErrCode = 10071
	ErrReplicasNotSupported     ErrCode = 10074
	ErrStreamStoreFailed        ErrCode = 10077
	ErrHeaderExceedsMaximum     ErrCode = 10097
	ErrStreamSealed             ErrCode = 10109
	ErrStreamPurgeFailed        ErrCode = 10110
	ErrStreamRollupFailed       ErrCode = 10111
	ErrStreamMaxBytesRequired   ErrCode = 10113
	ErrStreamMaxBytesExceeded   ErrCode = 10122
	ErrStreamNamePathSeparators ErrCode = 10128
	ErrReplicasNegative         ErrCode = 10133
	ErrStreamTransformSource    ErrCode = 10155
	ErrStreamTransformDest      ErrCode = 10156
	ErrMessageTTLInvalid        ErrCode = 10165
	ErrMessageTTLDisabled       ErrCode = 10166
	ErrMessageIncrDisabled      ErrCode = 10168
	ErrMessageIncrMissing       ErrCode = 10169
	ErrMessageIncrPayload       ErrCode = 10170
	ErrMessageIncrInvalid       ErrCode = 10171
	ErrMessageCounterBroken     ErrCode = 10172
	ErrAtomicPublishDisabled    ErrCode = 10174
	ErrRequiredApiLevel         ErrCode = 10185
	ErrBatchPublishDisabled     ErrCode = 10205
)

// errInfo is the HTTP-like status and the default description of a code.
type errInfo struct {
	status int
	text   string
}

// errTable maps every ErrCode to its status (as nats-server assigns it) and
// jetwal's default description: coreErrors and the tables kept beside their
// codes in other files, joined when the package is initialised (no init
// function: Go orders package variables by their dependencies).
var errTable = joinErrTables(coreErrors, sourceErrors, snapshotErrors, batchErrors, scheduleErrors, clusterOpsErrors, consumerOpsErrors)

// joinErrTables returns one map holding every entry of tables. A code in
// two tables would keep the later entry; TestErrTablesDisjoint rules that
// out.
func joinErrTables(tables ...map[ErrCode]errInfo) map[ErrCode]errInfo {
	n := 0
	for _, t := range tables {
		n += len(t)
	}
	all := make(map[ErrCode]errInfo, n)
	for _, t := range tables {
		maps.Copy(all, t)
	}
	return all
}

// coreErrors are the streams' codes then the consumers'.
var coreErrors = map[ErrCode]errInfo{
	ErrAccountResourcesExceeded: {400, "resource limits exceeded for account"},
	ErrBadRequest:               {400, "bad request"},
	ErrClusterRequired:          {503, "JetStream clustering support required"},
	ErrConsumerNotFound:         {404, "consumer not found"},
	ErrInsufficientResources:    {503, "insufficient resources"},
	ErrInvalidJSON:              {400, "invalid JSON"},
	ErrMaximumStreams:           {400, "maximum number of streams reached"},
	ErrMemoryResourcesExceeded:  {500, "insufficient memory resources available"},
	ErrNoMessageFound:           {404, "no message found"},
	ErrNotEmptyRequest:          {400, "expected an empty request payload"},
	ErrNotEnabledForAccount:     {503, "JetStream not enabled for account"},
	ErrSequenceNotFound:         {400, "sequence not found"},
	ErrStorageResourcesExceeded: {500, "insufficient storage resources available"},
	ErrStreamCreate:             {500, "stream create failed"},
	ErrStreamDelete:             {500, "stream delete failed"},
	ErrStreamGeneral:            {500, "stream operation failed"},
	ErrStreamInvalidConfig:      {500, "stream configuration invalid"},
	ErrPedantic:                 {400, "pedantic mode"},
	ErrStreamLimits:             {500, "stream limits exceeded"},
	ErrMessageExceedsMaximum:    {400, "message size exceeds maximum allowed"},
	ErrStreamMirrorNotUpdatable: {400, "stream mirror configuration can not be updated"},
	ErrStreamNameMismatch:       {400, "stream name in subject does not match request"},
	ErrStreamMsgDeleteFailed:    {500, "message delete failed"},
	ErrStreamNameExist:          {400, "stream name already in use with a different configuration"},
	ErrStreamNotFound:           {404, "stream not found"},
	ErrStreamNotMatch:           {400, "expected stream does not match"},
	ErrStreamReplicasNotUpdate:  {400, "replicas configuration can not be updated"},
	ErrStreamSubjectOverlap:     {400, "subjects overlap with an existing stream"},
	ErrStreamUpdate:             {500, "stream update failed"},
	ErrStreamWrongLastMsgID:     {400, "wrong last msg ID"},
	ErrStreamWrongLastSequence:  {400, "wrong last sequence"},
	ErrReplicasNotSupported:     {500, "replicas > 1 not supported in non-clustered mode"},
	ErrStreamStoreFailed:        {503, "storing the message failed"},
	ErrHeaderExceedsMaximum:     {400, "header size exceeds maximum allowed of 64k"},
	ErrStreamSealed:             {400, "invalid operation on sealed stream"},
	ErrStreamPurgeFailed:        {500, "stream purge failed"},
	ErrStreamRollupFailed:       {500, "rollup failed"},
	ErrStreamMaxBytesRequired:   {400, "account requires a stream config to have max bytes set"},
	ErrStreamMaxBytesExceeded:   {400, "stream max bytes exceeds account limit max stream bytes"},
	ErrStreamNamePathSeparators: {400, "stream name can not contain path separators"},
	ErrReplicasNegative:         {400, "replicas count cannot be negative"},
	ErrStreamTransformSource:    {400, "stream transform source is invalid"},
	ErrStreamTransformDest:      {400, "stream transform destination is invalid"},
	ErrMessageTTLInvalid:        {400, "invalid per-message TTL"},
	ErrMessageTTLDisabled:       {400, "per-message TTL is disabled"},
	ErrMessageIncrDisabled:      {400, "message counters is disabled"},
	ErrMessageIncrMissing:       {400, "message counter increment is missing"},
	ErrMessageIncrPayload:       {400, "message counter has payload"},
	ErrMessageIncrInvalid:       {400, "message counter increment is invalid"},
	ErrMessageCounterBroken:     {400, "message counter is broken"},
	ErrAtomicPublishDisabled:    {400, "atomic publish is disabled"},
	ErrRequiredApiLevel:         {412, "JetStream minimum api level required"},
	ErrBatchPublishDisabled:     {400, "batch publish is disabled"},
	// consumers (codes in consumer.go)
	ErrConsumerBadDurableName:         {400, "durable name can not contain '.', '*', '>'"},
	ErrConsumerConfigRequired:         {400, "consumer config required"},
	ErrConsumerCreate:                 {500, "consumer create failed"},
	ErrConsumerNameExist:              {400, "consumer name already in use"},
	ErrConsumerDurableNameNotMatch:    {400, "consumer name in subject does not match durable name in request"},
	ErrConsumerDeliverToWildcards:     {400, "consumer deliver subject has wildcards"},
	ErrConsumerPushMaxWaiting:         {400, "consumer in push mode can not set max waiting"},
	ErrConsumerSmallHeartbeat:         {400, "consumer idle heartbeat needs to be >= 100ms"},
	ErrConsumerFCRequiresPush:         {400, "consumer flow control requires a push based consumer"},
	ErrConsumerHBRequiresPush:         {400, "consumer idle heartbeat requires a push based consumer"},
	ErrConsumerFilterNotSubset:        {400, "consumer filter subject is not a valid subset of the interest subjects"},
	ErrConsumerInvalidPolicy:          {400, "invalid consumer policy"},
	ErrConsumerWQRequiresExplicitAck:  {400, "workqueue stream requires explicit ack"},
	ErrConsumerWQMultipleUnfiltered:   {400, "multiple non-filtered consumers not allowed on workqueue stream"},
	ErrConsumerWQNotUnique:            {400, "filtered consumer not unique on workqueue stream"},
	ErrConsumerWQNotDeliverAll:        {400, "consumer must be deliver all on workqueue stream"},
	ErrConsumerMaxDeliverBackoff:      {400, "max deliver is required to be > length of backoff values"},
	ErrConsumerFilterMismatch:         {400, "Consumer create request did not match filtered subject from create subject"},
	ErrConsumerDuplicateFilters:       {400, "consumer cannot have both FilterSubject and FilterSubjects specified"},
	ErrConsumerOverlappingFilters:     {400, "consumer subject filters cannot overlap"},
	ErrConsumerEmptyFilter:            {400, "consumer filter in FilterSubjects cannot be empty"},
	ErrConsumerAlreadyExists:          {400, "consumer already exists"},
	ErrConsumerDoesNotExist:           {400, "consumer does not exist"},
	ErrMaximumConsumers:               {400, "maximum consumers limit reached"},
	ErrConsumerStoreFailed:            {500, "error creating store for consumer"},
	ErrConsumerInvalidPriorityGroup:   {400, "Provided priority group does not exist for this consumer"},
	ErrConsumerInvalidGroupName:       {400, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"},
	ErrConsumerPolicyWithoutGroup:     {400, "Setting PriorityPolicy requires at least one PriorityGroup to be set"},
	ErrConsumerEmptyGroupName:         {400, "Group name cannot be an empty string"},
	ErrConsumerPushWithPriority:       {400, "priority groups can not be used with push consumers"},
	ErrConsumerGroupWithPolicyNone:    {400, "consumer can not have priority groups when policy is none"},
	ErrConsumerPinnedTTLWithoutPolicy: {400, "PinnedTTL cannot be set when PriorityPolicy is none"},
	ErrConsumerMaxPendingAckPolicy:    {400, "consumer requires ack policy for max ack pending"},
	ErrConsumerMaxPendingAckExcess:    {400, "consumer max ack pending exceeds system limit"},
	ErrConsumerInactiveExcess:         {400, "consumer inactive threshold exceeds system limit"},
	ErrConsumerInvalidSampling:        {400, "failed to parse consumer sampling configuration"},
	ErrConsumerPullWithRateLimit:      {400, "consumer in pull mode can not have rate limit set"},
	ErrConsumerMaxRequestExpires:      {400, "consumer max request expires needs to be >= 1ms"},
}

// Status returns the HTTP-like status nats-server pairs with the code, or 500
// for a code jetwal does not know.
func (c ErrCode) Status() int {
	if e, ok := errTable[c]; ok {
		return e.status
	}
	return 500
}

// ApiError is the "error" object of a failed API response or PubAck.
type ApiError struct {
	Code        int     `json:"code"`
	ErrCode     ErrCode `json:"err_code,omitempty"`
	Description string  `json:"description,omitempty"`
}

// Error formats the error as "description (err_code)".
func (e *ApiError) Error() string {
	return fmt.Sprintf("%s (%d)", e.Description, e.ErrCode)
}

// Is reports whether target is an *ApiError with the same err_code, so
// errors.Is(err, api.NewError(api.ErrStreamNotFound)) works.
func (e *ApiError) Is(target error) bool {
	t, ok := target.(*ApiError)
	return ok && t.ErrCode == e.ErrCode
}

// NewError returns the error for code with its default description.
func NewError(code ErrCode) *ApiError {
	e := errTable[code]
	if e.text == "" {
		e = errInfo{500, "error"}
	}
	return &ApiError{Code: e.status, ErrCode: code, Description: e.text}
}

// Errorf returns the error for code with a formatted description.
func Errorf(code ErrCode, format string, args ...any) *ApiError {
	return &ApiError{Code: code.Status(), ErrCode: code, Description: fmt.Sprintf(format, args...)}
}

// Response is the part every API response starts with.
type Response struct {
	Type  string    `json:"type"`
	Error *ApiError `json:"error,omitempty"`
}
