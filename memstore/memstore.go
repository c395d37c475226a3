package memstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/jetwal/jetwal/store"
)

// Pre-wrapped sentinels for the paths a consumer loop hits constantly, so
// they cost no allocation.
var (
	errClosed   = fmt.Errorf("memstore: %w", store.ErrClosed)
	errNotFound = fmt.Errorf("memstore: %w", store.ErrNotFound)
	errEOF      = fmt.Errorf("memstore: %w", store.ErrEOF)
)

// Store is an in-memory store.StreamStore. Create it with New; the zero
// value is not usable.
type Store struct {
	// mu guards every field up to the blank line below.
	mu     sync.RWMutex
	limits store.Limits
	closed bool
	// ents holds sequence base+i at index i. Its first and last entries
	// are live whenever the store is not empty; tombstones have subj == nil.
	ents ring
	base uint64
	// first and last are State().FirstSeq and State().LastSeq.
	first, last uint64
	lastTs      int64 // time of the last message appended
	msgs, bytes uint64
	subjects    map[string]*subjState
	subjGen     uint64 // bumped whenever a subject is created or removed
	ageTimer    *time.Timer
	ageArmed    bool   // ageTimer is scheduled
	tickets     uint64 // next AppendAsync delivery ticket

	fcache filterCache // has its own mutex; read under mu (shared or exclusive)
	turn   deliveryTurn
}

// entry is one slot of the dense message slice.
type entry struct {
	buf  []byte     // header followed by payload
	subj *subjState // nil marks a tombstone
	ts   int64      // kept on tombstones so times stay sorted for SeqForTime
	hlen uint32
}

func (e *entry) live() bool { return e.subj != nil }

func (e *entry) size() uint64 {
	return uint64(len(e.subj.name)+len(e.buf)) + store.MemRecordOverhead
}

// MsgSize is how a memory store accounts a message's bytes, as
// nats-server's memory store does (store.MemRecordSize).
func (s *Store) MsgSize(subject string, hdr, data []byte) uint64 {
	return store.MemRecordSize(subject, hdr, data)
}

var _ store.StreamStore = (*Store)(nil)

// New returns an empty store enforcing limits.
func New(limits store.Limits) (*Store, error) {
	if err := validate(limits); err != nil {
		return nil, err
	}
	s := &Store{
		limits:   limits,
		subjects: make(map[string]*subjState),
	}
	s.turn.cond = sync.NewCond(&s.turn.mu)
	return s, nil
}

func validate(l store.Limits) error {
	switch l.Discard {
	case store.DiscardOld, store.DiscardNew:
		return nil
	default:
		return fmt.Errorf("memstore: invalid discard policy %d", l.Discard)
	}
}

// Sync does nothing: memory is durable as soon as a message is stored.
func (s *Store) Sync() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// Close stops the expiry timer and releases all messages. Every later call
// returns store.ErrClosed, including a second Close.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	s.closed = true
	if s.ageTimer != nil {
		s.ageTimer.Stop()
		s.ageArmed = false
	}
	s.ents.reset()
	s.subjects = make(map[string]*subjState)
	s.subjGen++
	s.msgs, s.bytes = 0, 0
	return nil
}

// Remove is Close: a memory store has no files.
func (s *Store) Remove() error { return s.Close() }

// lastLive is the sequence of the newest message. Only meaningful when the
// store holds messages. Caller holds mu.
func (s *Store) lastLive() uint64 { return s.base + uint64(s.ents.len()) - 1 }

// slot returns the entry of seq, which must lie in [base, lastLive].
// Caller holds mu.
func (s *Store) slot(seq uint64) *entry { return s.ents.at(int(seq - s.base)) }

// at returns the live entry for seq, or nil. Caller holds mu.
func (s *Store) at(seq uint64) *entry {
	if seq < s.base || seq-s.base >= uint64(s.ents.len()) {
		return nil
	}
	e := s.slot(seq)
	if !e.live() {
		return nil
	}
	return e
}
