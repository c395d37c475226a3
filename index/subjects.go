package index

import (
	"github.com/jetwal/jetwal/subject"
)

// SubjectInfo is the per-subject summary.
type SubjectInfo struct {
	Msgs  uint64
	First uint64 // lowest live sequence
	Last  uint64 // highest live sequence
}

type subj struct {
	name string
	SubjectInfo
	list seqList // may hold sequences since deleted
}

// Subjects indexes sequences by subject. It is not safe for concurrent
// mutation; the store's lock guards it.
type Subjects struct {
	byName map[string]*subj
	gen    uint64 // bumped when the subject set changes
	last   *subj  // the entry Add touched last: streams often repeat a subject

	cacheGen uint64
	cache    map[string][]*subj // filter -> matching subjects
}

// wideMatch is the number of matching subjects above which a filtered walk
// checks subjects sequence by sequence instead of merging lists.
const wideMatch = 64

// NewSubjects returns an empty subject index.
func NewSubjects() *Subjects {
	return &Subjects{byName: make(map[string]*subj)}
}

// Add records that seq has subject name. Sequences must be added in
// increasing order per subject.
func (x *Subjects) Add(name string, seq uint64) {
	s := x.last
	if s == nil || s.name != name {
		s = x.byName[name]
	}
	if s == nil {
		s = &subj{name: name, SubjectInfo: SubjectInfo{First: seq}}
		x.byName[name] = s
		x.gen++
	}
	if s.Msgs == 0 {
		s.First = seq
	}
	s.Msgs++
	s.Last = seq
	s.list.add(seq)
	x.last = s
}

// AddBytes is Add for a subject held in a byte slice; it allocates only
// for a subject not seen before.
func (x *Subjects) AddBytes(name []byte, seq uint64) {
	s := x.last
	if s == nil || s.name != string(name) {
		s = x.byName[string(name)]
	}
	if s != nil {
		if s.Msgs == 0 {
			s.First = seq
		}
		s.Msgs++
		s.Last = seq
		s.list.add(seq)
		x.last = s
		return
	}
	x.Add(string(name), seq)
}

// Remove records that seq (of subject name) was deleted. live reports whether
// a sequence is still stored; it is used to move First and Last.
func (x *Subjects) Remove(name string, seq uint64, live func(uint64) bool) {
	s := x.byName[name]
	if s == nil || s.Msgs == 0 {
		return
	}
	s.Msgs--
	if s.Msgs == 0 {
		delete(x.byName, name)
		x.gen++
		if x.last == s {
			x.last = nil
		}
		return
	}
	if seq == s.First {
		it := s.list.from(seq + 1)
		for {
			q, ok := it.next()
			if !ok {
				break
			}
			if q > seq && live(q) {
				s.First = q
				break
			}
		}
	}
	if seq == s.Last {
		s.list.rev(seq-1, func(q uint64) bool {
			if live(q) {
				s.Last = q
				return false
			}
			return true
		})
	}
	if s.list.n > 2*int(s.Msgs)+64 {
		x.rebuild(s, live)
	}
}

func (x *Subjects) rebuild(s *subj, live func(uint64) bool) {
	var nl seqList
	it := s.list.from(s.First)
	for {
		q, ok := it.next()
		if !ok {
			break
		}
		if q >= s.First && live(q) {
			nl.add(q)
		}
	}
	s.list = nl
}

// Get returns a subject's summary.
func (x *Subjects) Get(name string) (SubjectInfo, bool) {
	s := x.byName[name]
	if s == nil {
		return SubjectInfo{}, false
	}
	return s.SubjectInfo, true
}

// Len is the number of subjects with live messages.
func (x *Subjects) Len() int { return len(x.byName) }

// Each calls fn for every subject matching filter ("" or ">" match all).
func (x *Subjects) Each(filter string, fn func(name string, info SubjectInfo)) {
	if filter == "" || filter == ">" {
		for n, s := range x.byName {
			fn(n, s.SubjectInfo)
		}
		return
	}
	for _, s := range x.match(filter) {
		fn(s.name, s.SubjectInfo)
	}
}

// match resolves a filter to its subjects, cached until the set changes.
func (x *Subjects) match(filter string) []*subj {
	if subject.IsLiteral(filter) {
		if s := x.byName[filter]; s != nil {
			return []*subj{s}
		}
		return nil
	}
	if x.cacheGen != x.gen || x.cache == nil {
		x.cache = make(map[string][]*subj)
		x.cacheGen = x.gen
	}
	if m, ok := x.cache[filter]; ok {
		return m
	}
	var m []*subj
	for n, s := range x.byName {
		if subject.Match(filter, n) {
			m = append(m, s)
		}
	}
	if len(x.cache) > 256 {
		clear(x.cache)
	}
	x.cache[filter] = m
	return m
}

// Plan says how to find the messages of a filter.
type Plan struct {
	All  bool // every sequence matches
	Wide bool // many subjects match: walk sequences and test subjects
	subs []*subj
}

// PlanFor returns the plan for filter.
func (x *Subjects) PlanFor(filter string) Plan {
	if filter == "" || filter == ">" {
		return Plan{All: true}
	}
	m := x.match(filter)
	if len(m) > wideMatch {
		return Plan{Wide: true}
	}
	return Plan{subs: m}
}

// PlanSubjects is PlanFor but always resolves the matching subjects, even
// when many match (for counting, where walking lists beats reading records).
func (x *Subjects) PlanSubjects(filter string) Plan {
	if filter == "" || filter == ">" {
		m := make([]*subj, 0, len(x.byName))
		for _, s := range x.byName {
			m = append(m, s)
		}
		return Plan{subs: m}
	}
	return Plan{subs: x.match(filter)}
}

// Empty reports whether the plan can match nothing.
func (p Plan) Empty() bool { return !p.All && !p.Wide && len(p.subs) == 0 }

// NextIn returns the lowest live sequence >= start among the plan's
// subjects. Only for plans that are neither All nor Wide.
func (p Plan) NextIn(start uint64, live func(uint64) bool) (uint64, bool) {
	best, found := uint64(0), false
	for _, s := range p.subs {
		if s.Last < start || (found && s.First >= best) {
			continue
		}
		from := max(start, s.First)
		it := s.list.from(from)
		for {
			q, ok := it.next()
			if !ok || (found && q >= best) {
				break
			}
			if q >= from && live(q) {
				best, found = q, true
				break
			}
		}
	}
	return best, found
}

// PrevIn returns the highest live sequence <= seq among the plan's subjects.
func (p Plan) PrevIn(seq uint64, live func(uint64) bool) (uint64, bool) {
	best, found := uint64(0), false
	for _, s := range p.subs {
		if s.First > seq || (found && s.Last <= best) {
			continue
		}
		s.list.rev(min(seq, s.Last), func(q uint64) bool {
			if found && q <= best {
				return false
			}
			if live(q) {
				best, found = q, true
				return false
			}
			return true
		})
	}
	return best, found
}

// CountFrom counts live messages >= start among the plan's subjects; with
// lastPerSubject it counts subjects whose last message is >= start.
func (p Plan) CountFrom(start uint64, lastPerSubject bool, live func(uint64) bool) uint64 {
	var n uint64
	for _, s := range p.subs {
		switch {
		case s.Last < start:
		case lastPerSubject:
			n++
		case start <= s.First:
			n += s.Msgs
		default:
			it := s.list.from(start)
			for {
				q, ok := it.next()
				if !ok {
					break
				}
				if q >= start && live(q) {
					n++
				}
			}
		}
	}
	return n
}

// MemBytes estimates the heap the subject index uses.
func (x *Subjects) MemBytes() int {
	n := 0
	for name, s := range x.byName {
		n += len(name) + 48 + 96 + s.list.memBytes()
	}
	return n
}

// SubjectOf finds the subject whose list holds seq (slow: for records whose
// subject bytes were erased).
func (x *Subjects) SubjectOf(seq uint64) string {
	for name, s := range x.byName {
		if seq < s.First || seq > s.Last {
			continue
		}
		it := s.list.from(seq)
		for {
			q, ok := it.next()
			if !ok || q > seq {
				break
			}
			if q == seq {
				return name
			}
		}
	}
	return ""
}
