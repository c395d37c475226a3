package fuzz

import (
	"errors"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// recModel is what the store acknowledged, as FuzzRecover tracks it.
type recModel struct {
	always bool // SyncAlways: a returned call is durable

	mu       sync.Mutex
	written  map[uint64]store.Msg // every message handed a sequence
	synced   map[uint64]bool      // durable: must survive unless damaged
	removed  map[uint64]bool      // removal asked for (durable or not)
	durRem   map[uint64]bool      // removal durable: must never come back
	unsynced []uint64             // SyncNever: appended since the last Sync
	pendRem  []uint64             // SyncNever: removed since the last Sync
	maxSeq   uint64               // highest sequence handed out
	inflight sync.WaitGroup       // AppendAsync calls whose done has not run
	asyncErr error
}

func newRecModel(always bool) *recModel {
	return &recModel{
		always: always, written: map[uint64]store.Msg{}, synced: map[uint64]bool{},
		removed: map[uint64]bool{}, durRem: map[uint64]bool{},
	}
}

// appended records a message that was handed seq. durable says whether the
// call that returned it also made it durable.
func (m *recModel) appended(t *testing.T, msg store.Msg, durable bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.written[msg.Seq]; dup {
		t.Errorf("sequence %d handed out twice", msg.Seq)
	}
	m.written[msg.Seq] = msg
	m.maxSeq = max(m.maxSeq, msg.Seq)
	if durable {
		m.synced[msg.Seq] = true
	} else {
		m.unsynced = append(m.unsynced, msg.Seq)
	}
}

func (m *recModel) removedSeq(seq uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removed[seq] = true
	if m.always {
		m.durRem[seq] = true
	} else {
		m.pendRem = append(m.pendRem, seq)
	}
}

// syncedAll is called after a Sync (or Close) returned.
func (m *recModel) syncedAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range m.unsynced {
		m.synced[q] = true
	}
	for _, q := range m.pendRem {
		m.durRem[q] = true
	}
	m.unsynced, m.pendRem = nil, nil
}

// resync marks removed what a purge took away: messages the model holds live
// that the store no longer has.
func (m *recModel) resync(t *testing.T, s *wal.Store) {
	m.mu.Lock()
	var live []uint64
	for q := range m.written {
		if !m.removed[q] {
			live = append(live, q)
		}
	}
	m.mu.Unlock()
	for _, q := range live {
		var got store.Msg
		err := s.Load(q, &got)
		switch {
		case errors.Is(err, store.ErrNotFound):
			m.removedSeq(q)
		case err != nil:
			t.Fatalf("load %d after purge: %v", q, err)
		}
	}
}

// snapshot copies what must survive a crash taken right after it: synced,
// not removed. It is taken before the crash clone, so everything it calls
// durable was durable when the clone was cut.
func (m *recModel) snapshot() (required map[uint64]bool, maxAcked uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	required = map[uint64]bool{}
	for q := range m.synced {
		maxAcked = max(maxAcked, q)
		if !m.removed[q] {
			required[q] = true
		}
	}
	return required, maxAcked
}

func sameMsg(a, b *store.Msg) bool {
	return a.Seq == b.Seq && a.Time == b.Time && a.Subject == b.Subject &&
		string(a.Header) == string(b.Header) && string(a.Data) == string(b.Data)
}
