package memstore

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// subjState is the per-subject index entry.
type subjState struct {
	name string
	seqs []uint64 // live sequences of this subject, ascending
}

func (ss *subjState) firstSeq() uint64 { return ss.seqs[0] }
func (ss *subjState) lastSeq() uint64  { return ss.seqs[len(ss.seqs)-1] }

// remove drops seq from the list. Removing at either end is O(1); in the
// middle the shorter side is shifted.
func (ss *subjState) remove(seq uint64) {
	n := len(ss.seqs)
	switch {
	case ss.seqs[0] == seq:
		ss.seqs = ss.seqs[1:]
	case ss.seqs[n-1] == seq:
		ss.seqs = ss.seqs[:n-1]
	default:
		i, ok := slices.BinarySearch(ss.seqs, seq)
		if !ok {
			return
		}
		if i < n/2 {
			copy(ss.seqs[1:i+1], ss.seqs[:i])
			ss.seqs = ss.seqs[1:]
		} else {
			copy(ss.seqs[i:], ss.seqs[i+1:])
			ss.seqs = ss.seqs[:n-1]
		}
	}
	// Give back the array once most of it is unused.
	if c := cap(ss.seqs); c > 64 && len(ss.seqs) < c/4 {
		ss.seqs = slices.Clone(ss.seqs)
	}
}

// nextAt returns the first sequence >= seq of this subject.
func (ss *subjState) nextAt(seq uint64) (uint64, bool) {
	i, _ := slices.BinarySearch(ss.seqs, seq)
	if i == len(ss.seqs) {
		return 0, false
	}
	return ss.seqs[i], true
}

// prevAt returns the last sequence <= seq of this subject.
func (ss *subjState) prevAt(seq uint64) (uint64, bool) {
	i, found := slices.BinarySearch(ss.seqs, seq)
	if found {
		return seq, true
	}
	if i == 0 {
		return 0, false
	}
	return ss.seqs[i-1], true
}

// countFrom counts this subject's sequences >= seq.
func (ss *subjState) countFrom(seq uint64) uint64 {
	i, _ := slices.BinarySearch(ss.seqs, seq)
	return uint64(len(ss.seqs) - i)
}

// countBelow counts this subject's sequences < seq.
func (ss *subjState) countBelow(seq uint64) uint64 {
	i, _ := slices.BinarySearch(ss.seqs, seq)
	return uint64(i)
}

// filterKind classifies a filter.
type filterKind int

const (
	filterAll      filterKind = iota // "" or ">"
	filterLiteral                    // no wildcard token
	filterWildcard                   // at least one '*' or '>' token
)

// parseFilter classifies filter, or returns store.ErrInvalidSubject.
func parseFilter(filter string) (filterKind, error) {
	switch {
	case filter == "" || filter == ">":
		return filterAll, nil
	case !subject.ValidFilter(filter):
		return 0, fmt.Errorf("memstore: filter %q: %w", filter, store.ErrInvalidSubject)
	case subject.IsLiteral(filter):
		return filterLiteral, nil
	default:
		return filterWildcard, nil
	}
}

// filterCache remembers which subjects match a wildcard filter. It is valid
// for one value of Store.subjGen; any change to the set of subjects empties
// it.
type filterCache struct {
	mu  sync.Mutex // guards the fields below
	gen uint64
	m   map[string][]*subjState
}

// maxCachedFilters bounds the filter cache.
const maxCachedFilters = 64

// matching returns the subjects matching a wildcard filter. The slice is
// shared and must not be modified. Caller holds s.mu, shared or exclusive.
func (s *Store) matching(filter string) []*subjState {
	c := &s.fcache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.gen != s.subjGen {
		c.m = make(map[string][]*subjState)
		c.gen = s.subjGen
	}
	if l, ok := c.m[filter]; ok {
		return l
	}
	var l []*subjState
	for name, ss := range s.subjects {
		if subject.Match(filter, name) {
			l = append(l, ss)
		}
	}
	if len(c.m) >= maxCachedFilters {
		clear(c.m)
	}
	c.m[strings.Clone(filter)] = l
	return l
}

// cachedMatching returns the cached subjects matching a wildcard filter,
// if the cache holds them for the current subject set. Caller holds s.mu.
func (s *Store) cachedMatching(filter string) ([]*subjState, bool) {
	c := &s.fcache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.gen != s.subjGen {
		return nil, false
	}
	l, ok := c.m[filter]
	return l, ok
}

// subjectsFor returns the subjects selected by a parsed filter; for
// filterAll it returns nil and all=true. Caller holds s.mu.
func (s *Store) subjectsFor(kind filterKind, filter string) (list []*subjState, all bool) {
	switch kind {
	case filterAll:
		return nil, true
	case filterLiteral:
		if ss := s.subjects[filter]; ss != nil {
			return []*subjState{ss}, false
		}
		return nil, false
	default:
		return s.matching(filter), false
	}
}

// matches reports whether a live entry's subject is selected by filter.
func matches(kind filterKind, filter string, e *entry) bool {
	switch kind {
	case filterAll:
		return true
	case filterLiteral:
		return e.subj.name == filter
	default:
		return subject.Match(filter, e.subj.name)
	}
}
