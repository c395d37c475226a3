package raftstore

import (
	"errors"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/vfs"
)

// The interfaces a Store implements.
var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.StableStore       = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
)

// Options configures Open. The zero value means the defaults.
type Options struct {
	// FS is the filesystem; nil means the operating system's.
	FS vfs.FS
	// Log configures the engine (segment sizes).
	Log raftlog.Options
	// Encryption, when it has a key, is the log's encryption
	// (raftlog.Options.Encryption, which it overrides): every entry is
	// sealed, with a key file of the log's own. Snapshots are sealed by
	// wrapping the snapshot store (WrapSnapshots).
	Encryption crypt.Config
}

// Store is a raft log store and stable store on jetwal segments. It is safe
// for concurrent use.
type Store struct {
	log *raftlog.Store

	bufMu sync.Mutex      // guards buf
	buf   []raftlog.Entry // conversion buffer reused by StoreLogs
}

// Open opens or creates the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	lo := opts.Log
	if opts.Encryption.Enabled() {
		lo.Encryption = opts.Encryption
	}
	l, err := raftlog.Open(opts.FS, dir, lo)
	if err != nil {
		return nil, err
	}
	return &Store{log: l}, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.log.Close() }

// Encrypted reports whether the log seals what it writes.
func (s *Store) Encrypted() bool { return s.log.Encrypted() }

// PlainWithKey reports that a key is configured but the log was written in
// the clear before it was, so it stays in the clear.
func (s *Store) PlainWithKey() bool { return s.log.PlainWithKey() }

// Engine returns the underlying raftlog store.
func (s *Store) Engine() *raftlog.Store { return s.log }

// FirstIndex implements raft.LogStore: the first index stored, 0 if none.
func (s *Store) FirstIndex() (uint64, error) { return s.log.FirstIndex() }

// LastIndex implements raft.LogStore: the last index stored, 0 if none.
func (s *Store) LastIndex() (uint64, error) { return s.log.LastIndex() }

// GetLog implements raft.LogStore. It returns raft.ErrLogNotFound for an
// index not stored, and an error wrapping raftlog.ErrCorrupt for a damaged
// record.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	var e raftlog.Entry
	if err := s.log.GetEntry(index, &e); err != nil {
		if errors.Is(err, raftlog.ErrNotFound) {
			return raft.ErrLogNotFound
		}
		return err
	}
	log.Index = e.Index
	log.Term = e.Term
	log.Type = raft.LogType(e.Type)
	log.Data = e.Data
	log.Extensions = e.Extensions
	log.AppendedAt = e.AppendedAt
	return nil
}

// StoreLog implements raft.LogStore.
func (s *Store) StoreLog(log *raft.Log) error { return s.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore: the batch is durable when it returns.
// Indexes must be consecutive and follow LastIndex (IsMonotonic).
func (s *Store) StoreLogs(logs []*raft.Log) error {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	if cap(s.buf) < len(logs) {
		s.buf = make([]raftlog.Entry, len(logs))
	}
	b := s.buf[:len(logs)]
	for i, l := range logs {
		b[i] = raftlog.Entry{
			Index:      l.Index,
			Term:       l.Term,
			Type:       uint8(l.Type),
			Data:       l.Data,
			Extensions: l.Extensions,
			AppendedAt: l.AppendedAt,
		}
	}
	err := s.log.StoreEntries(b)
	clear(b) // keep no reference to the caller's data
	return err
}

// DeleteRange implements raft.LogStore: it deletes [min, max], which must
// include the first or the last index.
func (s *Store) DeleteRange(min, max uint64) error { return s.log.DeleteRange(min, max) }

// IsMonotonic implements raft.MonotonicLogStore: the store refuses gaps.
func (s *Store) IsMonotonic() bool { return true }

// Set implements raft.StableStore, atomically and durably.
func (s *Store) Set(key, val []byte) error { return s.log.Set(key, val) }

// Get implements raft.StableStore: the value, or an empty slice if key was
// never set.
func (s *Store) Get(key []byte) ([]byte, error) {
	v, _, err := s.log.Get(key)
	return v, err
}

// SetUint64 implements raft.StableStore.
func (s *Store) SetUint64(key []byte, val uint64) error { return s.log.SetUint64(key, val) }

// GetUint64 implements raft.StableStore: the value, or 0 if key was never
// set.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, _, err := s.log.GetUint64(key)
	return v, err
}
