package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// smallOpts makes segments roll over every few dozen entries.
var smallOpts = Options{MinSegmentSize: 4096, MaxSegmentSize: 16384}

// genEntry builds a deterministic entry for index with the given term,
// covering every field and each kind of AppendedAt.
func genEntry(index, term uint64) Entry {
	r := rand.New(rand.NewPCG(index, term))
	e := Entry{Index: index, Term: term, Type: uint8(index % 7)}
	if n := r.IntN(200); n > 0 {
		e.Data = make([]byte, n)
		for i := range e.Data {
			e.Data[i] = byte(r.Uint32())
		}
	}
	if index%3 == 0 {
		e.Extensions = []byte(fmt.Sprintf("ext-%d", index))
	}
	switch index % 4 {
	case 0:
		// zero time
	case 1:
		e.AppendedAt = time.Unix(1_700_000_000+int64(index), int64(index%1e9))
	case 2:
		e.AppendedAt = time.Date(3000, 1, 2, 3, 4, 5, int(index%1e9), time.UTC) // beyond UnixNano
	case 3:
		e.AppendedAt = time.Date(1600, 1, 2, 3, 4, 5, 6, time.UTC) // before UnixNano
	}
	return e
}

func genEntries(from uint64, n int, term uint64) []Entry {
	out := make([]Entry, n)
	for i := range out {
		out[i] = genEntry(from+uint64(i), term)
	}
	return out
}

func entryEqual(a, b *Entry) bool {
	return a.Index == b.Index && a.Term == b.Term && a.Type == b.Type &&
		bytes.Equal(a.Data, b.Data) && bytes.Equal(a.Extensions, b.Extensions) &&
		a.AppendedAt.Equal(b.AppendedAt) && a.AppendedAt.IsZero() == b.AppendedAt.IsZero()
}

// model is the log a store should hold: ents[i] has index first+i.
type model struct {
	first uint64
	ents  []Entry
}

func (m *model) last() uint64 {
	if len(m.ents) == 0 {
		return 0
	}
	return m.first + uint64(len(m.ents)) - 1
}

func (m *model) store(es []Entry) {
	if len(m.ents) == 0 {
		m.first = es[0].Index
	}
	m.ents = append(m.ents, es...)
}

func (m *model) deleteRange(lo, hi uint64) {
	if len(m.ents) == 0 || lo > hi || hi < m.first || lo > m.last() {
		return
	}
	last := m.last()
	switch {
	case lo <= m.first && hi >= last:
		m.first, m.ents = 0, nil
	case lo <= m.first:
		m.ents = append([]Entry(nil), m.ents[hi+1-m.first:]...)
		m.first = hi + 1
	default:
		m.ents = m.ents[:lo-m.first]
	}
}

func (m *model) clone() model {
	return model{first: m.first, ents: append([]Entry(nil), m.ents...)}
}

// checkModel asserts that s holds exactly m.
func checkModel(t testing.TB, s *Store, m *model) {
	t.Helper()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	wantFirst := m.first
	if len(m.ents) == 0 {
		wantFirst = 0
	}
	if first != wantFirst || last != m.last() {
		t.Fatalf("range [%d, %d], want [%d, %d]", first, last, wantFirst, m.last())
	}
	for i := range m.ents {
		var e Entry
		if err := s.GetEntry(m.ents[i].Index, &e); err != nil {
			t.Fatalf("GetEntry(%d): %v", m.ents[i].Index, err)
		}
		if !entryEqual(&e, &m.ents[i]) {
			t.Fatalf("GetEntry(%d) = %+v, want %+v", m.ents[i].Index, e, m.ents[i])
		}
	}
	var e Entry
	for _, idx := range []uint64{0, m.last() + 1, m.last() + 100} {
		if err := s.GetEntry(idx, &e); !errors.Is(err, ErrNotFound) {
			t.Fatalf("GetEntry(%d) outside [%d, %d]: err %v, want ErrNotFound", idx, first, last, err)
		}
	}
	if first > 1 {
		if err := s.GetEntry(first-1, &e); !errors.Is(err, ErrNotFound) {
			t.Fatalf("GetEntry(%d) below first: err %v, want ErrNotFound", first-1, err)
		}
	}
}

func mustOpen(t testing.TB, fs vfs.FS, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(fs, dir, opts)
	if err != nil {
		t.Fatalf("Open %s: %v", dir, err)
	}
	return s
}

// checkClean runs Check and fails on any damage.
func checkClean(t testing.TB, fs vfs.FS, dir string) *Report {
	t.Helper()
	r, err := Check(fs, dir)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !r.OK() {
		t.Fatalf("Check found damage: %v", r.Damage)
	}
	return r
}
