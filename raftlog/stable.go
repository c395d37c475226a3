package raftlog

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
)

// stableKV is the StableStore: a small map kept in memory and written
// whole into the stable slot file on every Set (see doc.go for why).
type stableKV struct {
	file slotFile

	mu   sync.Mutex // guards kv and err, and serialises file rewrites
	kv   map[string][]byte
	werr error // sticky: the file's state is unknown after a failed rewrite
}

func (k *stableKV) load() error {
	p, err := k.file.load()
	if isNotExist(err) {
		k.kv = map[string][]byte{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("raftlog: %w", err)
	}
	k.kv, err = decodeStable(k.file.path, p)
	return err
}

func (k *stableKV) set(key string, val []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.werr != nil {
		return k.werr
	}
	next := make(map[string][]byte, len(k.kv)+1)
	keys := make([]string, 0, len(k.kv)+1)
	for kk, v := range k.kv {
		next[kk] = v
		if kk != key {
			keys = append(keys, kk)
		}
	}
	next[key] = append([]byte(nil), val...)
	keys = append(keys, key)
	sort.Strings(keys)
	if err := k.file.write(encodeStable(keys, next)); err != nil {
		k.werr = fmt.Errorf("raftlog: stable store failed, reopen it: %w", err)
		return err
	}
	k.kv = next
	return nil
}

func (k *stableKV) get(key string) ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.kv[key]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), v...), true
}

// Set stores val under key, atomically and durably: a crash leaves the old
// value or the new one, and once Set returns the new one survives.
func (s *Store) Set(key, val []byte) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.stable.set(string(key), val)
}

// Get returns the value stored under key, or nil and false.
func (s *Store) Get(key []byte) ([]byte, bool, error) {
	if err := s.checkOpen(); err != nil {
		return nil, false, err
	}
	v, ok := s.stable.get(string(key))
	return v, ok, nil
}

// SetUint64 stores v under key as 8 little-endian bytes.
func (s *Store) SetUint64(key []byte, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return s.Set(key, b[:])
}

// GetUint64 returns the value SetUint64 stored under key, or 0 and false.
func (s *Store) GetUint64(key []byte) (uint64, bool, error) {
	v, ok, err := s.Get(key)
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, fmt.Errorf("raftlog: key %q holds %d bytes, not a uint64", key, len(v))
	}
	return binary.LittleEndian.Uint64(v), true, nil
}

func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}
