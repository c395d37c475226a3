package index

import "github.com/jetwal/jetwal/subject"

// Plan says how to find the messages of a filter. It is valid until the
// subject index next changes.
type Plan struct {
	All  bool // every sequence matches
	Wide bool // many subjects match: walk sequences and test subjects
	x    *Subjects
	subs []uint32 // entry ids
	one  [1]uint32
	lit  bool // the plan of a literal subject: one holds its id (no allocation)
}

// ids is the plan's entry ids.
func (p *Plan) ids() []uint32 {
	if p.lit {
		return p.one[:]
	}
	return p.subs
}

// PlanFor returns the plan for filter.
func (x *Subjects) PlanFor(filter string) Plan {
	if filter == "" || filter == ">" {
		return Plan{All: true}
	}
	if subject.IsLiteral(filter) {
		if id, _, ok := x.lookup(filter); ok {
			return Plan{x: x, one: [1]uint32{id}, lit: true}
		}
		return Plan{}
	}
	m := x.match(filter)
	if len(m) > wideMatch {
		return Plan{Wide: true}
	}
	return Plan{x: x, subs: m}
}

// PlanSubjects is PlanFor but always resolves the matching subjects, even
// when many match (for counting, where walking lists beats reading records).
func (x *Subjects) PlanSubjects(filter string) Plan {
	if filter == "" || filter == ">" {
		m := make([]uint32, 0, x.Len())
		x.each(func(id uint32) { m = append(m, id) })
		return Plan{x: x, subs: m}
	}
	return Plan{x: x, subs: x.match(filter)}
}

// Empty reports whether the plan can match nothing.
func (p Plan) Empty() bool { return !p.All && !p.Wide && !p.lit && len(p.subs) == 0 }

// NextIn returns the lowest live sequence >= start among the plan's
// subjects. Only for plans that are neither All nor Wide.
func (p Plan) NextIn(start uint64, live func(uint64) bool) (uint64, bool) {
	best, found := uint64(0), false
	for _, id := range p.ids() {
		e := p.x.ent(id)
		if e.last < start || (found && e.first >= best) {
			continue
		}
		from := max(start, e.first)
		if e.list == 0 {
			for _, q := range [2]uint64{e.first, e.last} {
				if q >= from && (!found || q < best) && live(q) {
					best, found = q, true
					break
				}
			}
			continue
		}
		// A subject's live messages lie in [first, last]; its list may
		// hold removed ones past either end, which the walks do not visit.
		it := p.x.lists.at(e.list - 1).from(from)
		for {
			q, ok := it.next()
			if !ok || q > e.last || (found && q >= best) {
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
	for _, id := range p.ids() {
		e := p.x.ent(id)
		if e.first > seq || (found && e.last <= best) {
			continue
		}
		if e.list == 0 {
			for _, q := range [2]uint64{e.last, e.first} {
				if q <= seq && (!found || q > best) && live(q) {
					best, found = q, true
					break
				}
			}
			continue
		}
		p.x.lists.at(e.list-1).rev(min(seq, e.last), func(q uint64) bool {
			if q < e.first || (found && q <= best) {
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

// CountFrom counts live messages >= start among the plan's subjects.
func (p Plan) CountFrom(start uint64, live func(uint64) bool) uint64 {
	var n uint64
	for _, id := range p.ids() {
		e := p.x.ent(id)
		switch {
		case e.last < start:
		case start <= e.first:
			n += p.x.count(id, e)
		case e.list == 0:
			// first < start <= last: only last can count.
			if live(e.last) {
				n++
			}
		default:
			it := p.x.lists.at(e.list - 1).from(start)
			for {
				q, ok := it.next()
				if !ok || q > e.last {
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

// CountSubjectsIn counts the plan's subjects with a live message in [lo,
// hi]: with hi the last sequence readers may see, the subjects whose last
// message they can see is at or after lo (a subject whose only messages
// from lo on are still in flight does not count). A subject's first and
// last messages are live (the index moves them on a delete), so only a
// subject that straddles hi needs its list walked.
func (p Plan) CountSubjectsIn(lo, hi uint64, live func(uint64) bool) uint64 {
	var n uint64
	for _, id := range p.ids() {
		e := p.x.ent(id)
		switch {
		case lo > hi || e.last < lo || e.first > hi:
		case e.last <= hi, lo <= e.first:
			n++ // last, or first, lies in [lo, hi]
		case e.list == 0:
			// first < lo and hi < last: nothing else to look at.
		default:
			it := p.x.lists.at(e.list - 1).from(lo)
			for {
				q, ok := it.next()
				if !ok || q > hi {
					break
				}
				if q >= lo && live(q) {
					n++
					break
				}
			}
		}
	}
	return n
}

// CountRange counts the live messages in [lo, hi] among the plan's
// subjects, walking only the entries in that range of each subject's list.
func (p Plan) CountRange(lo, hi uint64, live func(uint64) bool) uint64 {
	var n uint64
	for _, id := range p.ids() {
		e := p.x.ent(id)
		switch {
		case lo > hi || e.last < lo || e.first > hi:
		case lo <= e.first && e.last <= hi:
			n += p.x.count(id, e)
		case e.list == 0:
			// One or two messages, first and last: count those in range.
			for _, q := range [2]uint64{e.first, e.last} {
				if q >= lo && q <= hi && live(q) {
					n++
				}
				if e.first == e.last {
					break
				}
			}
		default:
			it := p.x.lists.at(e.list - 1).from(lo)
			for {
				q, ok := it.next()
				if !ok || q > hi || q > e.last {
					break
				}
				if q >= lo && live(q) {
					n++
				}
			}
		}
	}
	return n
}
