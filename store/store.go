package store

import (
	"errors"
	"time"
)

// Msg is one stored message. Load functions fill a caller-supplied *Msg,
// reusing the capacity of its Header and Data slices, so steady-state reads
// allocate nothing. The slices belong to the Msg, not to the store.
type Msg struct {
	Seq     uint64
	Time    int64 // unix nanoseconds, assigned by the store on append
	Subject string
	Header  []byte // raw NATS header block ("NATS/1.0\r\n...\r\n\r\n") or nil
	Data    []byte
}

// Stream bytes are counted per message the way nats-server counts them,
// which differs between its two stores; jetwal's stores of the same kind
// count the same way, so state bytes, max_bytes limits and account usage
// agree with nats-server's.

// MemRecordOverhead is the fixed per-message overhead of a memory stream:
// sequence and timestamp, 8 bytes each.
const MemRecordOverhead = 16

// MemRecordSize is the accounted size of a message in a memory stream:
// subject + header + payload + MemRecordOverhead.
func MemRecordSize(subject string, hdr, data []byte) uint64 {
	return uint64(len(subject) + len(hdr) + len(data) + MemRecordOverhead)
}

// FileRecordOverhead is the fixed per-message overhead of a file stream, the
// size of nats-server's file store record around subject and payload:
// length (4), sequence (8), timestamp (8), subject length (2) and hash (8).
const FileRecordOverhead = 30

// FileHeaderOverhead is what a header block adds to a file stream message
// besides the block itself: its length (4).
const FileHeaderOverhead = 4

// FileRecordSize is the accounted size of a message in a file stream:
// subject + payload + FileRecordOverhead, and header + FileHeaderOverhead
// when the message has a header block.
func FileRecordSize(subject string, hdr, data []byte) uint64 {
	return FileRecordSizeLen(len(subject), len(hdr), len(data))
}

// FileRecordSizeLen is FileRecordSize from the lengths of the parts.
func FileRecordSizeLen(subjectLen, hdrLen, dataLen int) uint64 {
	n := uint64(subjectLen + dataLen + FileRecordOverhead)
	if hdrLen > 0 {
		n += uint64(hdrLen + FileHeaderOverhead)
	}
	return n
}

// Sizer is implemented by a store that says how it accounts a message's
// bytes in State.Bytes and against Limits.MaxBytes.
type Sizer interface {
	MsgSize(subject string, hdr, data []byte) uint64
}

// SizeFunc returns how s accounts message bytes: its MsgSize when it
// implements Sizer, MemRecordSize otherwise.
func SizeFunc(s StreamStore) func(subject string, hdr, data []byte) uint64 {
	if z, ok := s.(Sizer); ok {
		return z.MsgSize
	}
	return MemRecordSize
}

// DiscardPolicy says what happens when a limit is reached.
type DiscardPolicy int

const (
	// DiscardOld removes the oldest messages to make room.
	DiscardOld DiscardPolicy = iota
	// DiscardNew refuses the new message with a limit error.
	DiscardNew
)

// Limits are the stream limits a store enforces itself. Zero or negative
// values mean "no limit".
type Limits struct {
	MaxMsgs           int64
	MaxBytes          int64
	MaxAge            time.Duration
	MaxMsgsPerSubject int64
	MaxMsgSize        int32
	Discard           DiscardPolicy
	// DiscardNewPerSubject makes MaxMsgsPerSubject refuse new messages
	// (with Discard == DiscardNew) instead of dropping the subject's oldest.
	DiscardNewPerSubject bool
}

// State is a snapshot of a store's contents.
type State struct {
	Msgs        uint64
	Bytes       uint64
	FirstSeq    uint64
	FirstTime   time.Time
	LastSeq     uint64
	LastTime    time.Time
	NumSubjects int
	NumDeleted  int      // interior gaps between FirstSeq and LastSeq
	Deleted     []uint64 // filled only by StateWithDeleted, at most MaxDeletedList
	Lost        *LostData
}

// MaxDeletedList bounds State.Deleted: StateWithDeleted lists the lowest
// MaxDeletedList deleted sequences, and NumDeleted still counts them all.
// A file store can hold a gap of any length (SkipTo, when a mirror or a
// restored snapshot jumps ahead), and listing a gap of 2^40 sequences would
// take the memory and the time of 2^40 entries for one stream info request.
const MaxDeletedList = 1 << 20

// LostData names messages recovery found damaged and could not serve.
type LostData struct {
	Msgs  []uint64
	Bytes uint64
}

// SubjectState is the per-subject summary.
type SubjectState struct {
	Msgs  uint64
	First uint64
	Last  uint64
}

// AppendDone is called once an appended message is durable under the store's
// sync policy (or with the error that prevented it). Calls arrive in sequence
// order from a single goroutine; they must not block.
type AppendDone func(seq uint64, ts int64, err error)

// StreamStore is the storage behind one stream.
//
// All methods are safe for concurrent use. A message becomes visible to the
// Load functions and to State at the moment its AppendDone fires: a reader
// never observes a message that a crash could still take away when the sync
// policy is "always".
type StreamStore interface {
	// Append stores a message and returns once it is durable.
	Append(subject string, hdr, data []byte) (seq uint64, ts int64, err error)
	// AppendAsync stores a message and calls done once it is durable. The
	// store copies subject, hdr and data before returning; a limit or
	// validation error is returned directly and done is not called.
	AppendAsync(subject string, hdr, data []byte, done AppendDone) error

	// Load reads the message with sequence seq into m.
	// It returns ErrNotFound for a sequence never stored or removed.
	Load(seq uint64, m *Msg) error
	// LoadNext reads the first message with sequence >= start whose subject
	// matches filter ("" or ">" match all). ErrEOF when there is none.
	LoadNext(filter string, start uint64, m *Msg) error
	// LoadLast reads the last message matching filter. ErrNotFound if none.
	LoadLast(filter string, m *Msg) error
	// LoadPrev reads the last message with sequence <= seq matching filter.
	LoadPrev(filter string, seq uint64, m *Msg) error

	// Delete removes one message. erase overwrites its bytes on disk.
	// It returns ErrNotFound if the message was not there.
	Delete(seq uint64, erase bool) error
	// Purge removes messages matching filter ("" = all) with sequence < upTo
	// (0 = no bound), keeping the newest keep of them (0 = keep none). It
	// returns the number removed.
	Purge(filter string, upTo, keep uint64) (uint64, error)
	// Compact removes every message with sequence < seq; the first sequence
	// becomes seq (also when the store is empty).
	Compact(seq uint64) (uint64, error)
	// Truncate removes every message with sequence > seq.
	Truncate(seq uint64) error

	State() State
	// StateWithDeleted is State with the Deleted list filled (at most
	// MaxDeletedList entries, the lowest).
	StateWithDeleted() State
	// SubjectsState summarises the subjects matching filter.
	SubjectsState(filter string) map[string]SubjectState
	// NumPending counts messages with sequence >= start matching filter;
	// with lastPerSubject only the last message of each subject counts.
	NumPending(start uint64, filter string, lastPerSubject bool) uint64
	// SeqForTime returns the first sequence stored at or after t
	// (LastSeq+1 if none).
	SeqForTime(t time.Time) uint64

	// UpdateLimits applies new limits, removing what they no longer allow.
	UpdateLimits(Limits) error
	// Sync makes everything appended so far durable.
	Sync() error
	// Close flushes and releases the store.
	Close() error
	// Remove closes the store and deletes its files.
	Remove() error
}

// HeldAppender is a StreamStore that writes its appends in batches (a
// replicated stream: one raft entry per batch) and can be told that more
// appends follow at once. AppendAsyncHeld queues like AppendAsync but does
// not start the batch's write; Flush starts whatever is held. The caller
// must call Flush after its last AppendAsyncHeld (package jetstream does
// it at the end of the publisher's input chunk, server.Msg.Defer): a held
// append otherwise waits for the next append, write or completed batch.
type HeldAppender interface {
	AppendAsyncHeld(subject string, hdr, data []byte, done AppendDone) error
	Flush()
}

// Errors. Implementations wrap them with context; test with errors.Is.
var (
	ErrNotFound        = errors.New("store: message not found")
	ErrEOF             = errors.New("store: no message at or after sequence")
	ErrClosed          = errors.New("store: closed")
	ErrMaxMsgs         = errors.New("store: maximum messages exceeded")
	ErrMaxBytes        = errors.New("store: maximum bytes exceeded")
	ErrMaxMsgsPerSubj  = errors.New("store: maximum messages per subject exceeded")
	ErrMaxMsgSize      = errors.New("store: message size exceeds maximum allowed")
	ErrInvalidSubject  = errors.New("store: invalid subject")
	ErrCorrupt         = errors.New("store: corrupt data")
	ErrWriteFailed     = errors.New("store: earlier write failed; reopen the store")
	ErrInvalidSequence = errors.New("store: invalid sequence")
)
