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

// Size is the accounted size of a message, as JetStream counts bytes:
// subject + header + payload + a fixed per-record overhead.
func (m *Msg) Size() uint64 { return RecordSize(m.Subject, m.Header, m.Data) }

// RecordOverhead is the fixed per-message overhead counted in stream bytes.
const RecordOverhead = 16

// RecordSize is the accounted size of a message with these parts.
func RecordSize(subject string, hdr, data []byte) uint64 {
	return uint64(len(subject) + len(hdr) + len(data) + RecordOverhead)
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
	Deleted     []uint64 // filled only by StateWithDeleted
	Lost        *LostData
}

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
	// StateWithDeleted is State with the Deleted list filled.
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
