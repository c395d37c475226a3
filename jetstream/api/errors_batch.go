package api

// The error numbers of atomic (nats-server 2.12+) and fast (2.14+) batch
// publishing, kept beside the rest of errTable in a file of their own.
const (
	ErrAtomicPublishMissingSeq        ErrCode = 10175
	ErrAtomicPublishIncompleteBatch   ErrCode = 10176
	ErrAtomicPublishUnsupportedHeader ErrCode = 10177
	ErrAtomicPublishInvalidBatchID    ErrCode = 10179
	ErrMirrorWithAtomicPublish        ErrCode = 10198
	ErrAtomicPublishTooLargeBatch     ErrCode = 10199
	ErrAtomicPublishInvalidCommit     ErrCode = 10200
	ErrAtomicPublishDuplicateMsg      ErrCode = 10201
	ErrAtomicPublishTooManyInflight   ErrCode = 10210
	ErrStreamDuplicateMessageConflict ErrCode = 10158
	// Fast batch publishing (nats-server 2.14, allow_batched).
	ErrBatchPublishInvalidPattern   ErrCode = 10206
	ErrBatchPublishInvalidBatchID   ErrCode = 10207
	ErrBatchPublishUnknownBatchID   ErrCode = 10208
	ErrMirrorWithBatchPublish       ErrCode = 10209
	ErrBatchPublishTooManyInflight  ErrCode = 10211
	ErrStreamWrongLastSequenceConst ErrCode = 10164
)

// batchErrors are this file's part of errTable.
var batchErrors = map[ErrCode]errInfo{
	ErrAtomicPublishMissingSeq:        {400, "atomic publish sequence is missing"},
	ErrAtomicPublishIncompleteBatch:   {400, "atomic publish batch is incomplete"},
	ErrAtomicPublishUnsupportedHeader: {400, "atomic publish unsupported header used"},
	ErrAtomicPublishInvalidBatchID:    {400, "atomic publish batch ID is invalid"},
	ErrMirrorWithAtomicPublish:        {400, "stream mirrors can not also use atomic publishing"},
	ErrAtomicPublishTooLargeBatch:     {400, "atomic publish batch is too large"},
	ErrAtomicPublishInvalidCommit:     {400, "atomic publish batch commit is invalid"},
	ErrAtomicPublishDuplicateMsg:      {400, "atomic publish batch contains duplicate message id"},
	ErrAtomicPublishTooManyInflight:   {429, "atomic publish too many inflight"},
	ErrStreamDuplicateMessageConflict: {409, "duplicate message id is in process"},
	ErrBatchPublishInvalidPattern:     {400, "batch publish pattern is invalid"},
	ErrBatchPublishInvalidBatchID:     {400, "batch publish ID is invalid"},
	ErrBatchPublishUnknownBatchID:     {400, "batch publish ID unknown"},
	ErrMirrorWithBatchPublish:         {400, "stream mirrors can not also use batch publishing"},
	ErrBatchPublishTooManyInflight:    {429, "batch publish too many inflight"},
	ErrStreamWrongLastSequenceConst:   {400, "wrong last sequence"},
}
