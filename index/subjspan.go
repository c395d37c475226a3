package index

// RemoveSpan records that the subject's messages in lo..hi were deleted,
// n of them, and none of them is live any more (live reports false). It is
// Remove for a batch, as a compaction, purge, truncation or eviction of
// the oldest messages removes them: the subject's new first (or last)
// message is looked for once, past the span, instead of once per message
// from each removed one.
//
// Every message of the subject within lo..hi must be among the removed:
// the new first message is the first live one after hi.
func (x *Subjects) RemoveSpan(name string, n, lo, hi uint64, live func(uint64) bool) {
	if n == 0 {
		return
	}
	id, slot, ok := x.lookup(name)
	if !ok {
		return
	}
	e := x.ent(id)
	c := x.count(id, e)
	if n >= c {
		x.deleteEntry(id, slot)
		return
	}
	x.setCount(id, e, c-n)
	left := c - n
	firstGone := e.first >= lo && e.first <= hi
	lastGone := e.last >= lo && e.last <= hi
	if e.list == 0 { // two messages, one is left
		switch {
		case firstGone:
			e.first = e.last
		case lastGone:
			e.last = e.first
		case live(e.first): // neither in the span: a caller's mistake; keep the live one
			e.last = e.first
		default:
			e.first = e.last
		}
		return
	}
	l := x.lists.at(e.list - 1)
	if firstGone {
		it := l.from(hi + 1)
		for {
			q, ok := it.next()
			if !ok {
				break
			}
			if q > hi && live(q) {
				e.first = q
				break
			}
		}
	}
	if lastGone && lo > 0 {
		l.rev(lo-1, func(q uint64) bool {
			if live(q) {
				e.last = q
				return false
			}
			return true
		})
	}
	switch {
	case left <= 2:
		x.dropList(e)
	case uint64(l.n) > 2*left+64:
		rebuildList(l, e.first, live)
	}
}

// setCount sets a subject's number of live messages.
func (x *Subjects) setCount(id uint32, e *entry, c uint64) {
	e.msgs = uint32(c)
	if hi := c >> 32; hi != 0 {
		if x.over == nil {
			x.over = make(map[uint32]uint64)
		}
		x.over[id] = hi
	} else if x.over != nil {
		delete(x.over, id)
	}
}
