package jetstream

import (
	"slices"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// position sets where a new consumer starts by its deliver policy, as
// nats-server does: its delivered and ack floor stream sequences become the
// start minus one. A start below the stream's first sequence (messages
// removed by retention, a delete or a purge) moves up to it, so a consumer
// of a stream whose messages 1..4 are gone reports 4; without an explicit
// opt_start_seq a start past the end comes back to last+1, and an empty
// stream that never held a message starts at 1.
func (c *consumer) position() {
	st := c.s.store
	state := st.State()
	var start uint64
	switch c.cfg.DeliverPolicy {
	case api.DeliverAll:
		start = state.FirstSeq
	case api.DeliverLast:
		if len(c.filters) == 0 {
			start = state.LastSeq
			break
		}
		var m store.Msg
		for _, f := range c.filters {
			if err := st.LoadLast(f, &m); err == nil && m.Seq > start {
				start = m.Seq
			}
		}
	case api.DeliverNew:
		start = state.LastSeq + 1
	case api.DeliverByStartSequence:
		start = c.cfg.OptStartSeq
	case api.DeliverByStartTime:
		start = st.SeqForTime(*c.cfg.OptStartTime)
	case api.DeliverLastPerSubject:
		for _, f := range c.storeFilters() {
			for _, ss := range st.SubjectsState(f) {
				c.lps = append(c.lps, ss.Last)
			}
		}
		sortU64(c.lps)
		c.lpsAll = slices.Clone(c.lps)
		if len(c.lps) == 0 {
			start = state.LastSeq
		} else {
			start, c.lpsEnd = c.lps[0], c.lps[len(c.lps)-1]
		}
	}
	explicit := c.cfg.OptStartSeq != 0
	switch {
	case state.FirstSeq == 0 && !explicit:
		start = 1
	case start > state.LastSeq && !explicit:
		start = state.LastSeq + 1
	case start < state.FirstSeq:
		start = state.FirstSeq
	}
	if start > 1 {
		c.withState(func(s *consumerstate.State) { s.Reset(consumerstate.StreamSeq(start)) })
	}
}

// consumersPurged brings the consumers a purge concerns past it, as
// nats-server does: pending messages the purge removed count as acked,
// and a consumer left with nothing pending reports the purged-to sequence
// (the stream's new first, or for a purge by subject the first message
// left on it) as its delivered and ack floor stream sequence. filter is the
// purge's subject ("" for all).
func (s *stream) consumersPurged(filter string) {
	state := s.store.State()
	first := state.FirstSeq
	if filter != "" {
		var m store.Msg
		first = 0
		if s.store.LoadNext(filter, max(state.FirstSeq, 1), &m) == nil {
			first = m.Seq
		}
	}
	for _, c := range s.cons.all() {
		c.mu.Lock()
		start, ok := purgeStart(c.filters, filter, first, state)
		c.withState(func(st *consumerstate.State) {
			for seq := range st.Pending {
				if !s.hasMsg(uint64(seq)) {
					st.Ack(seq)
				}
			}
			if ok && len(st.Pending) == 0 && start > 1 && uint64(st.Delivered.Stream) < start-1 {
				st.Reset(consumerstate.StreamSeq(start))
			}
		})
		c.mu.Unlock()
		c.signal()
	}
}

// purgeStart is the sequence a consumer with filters (none: the whole
// stream) moves to after a purge of filter whose first remaining matching
// message is first; ok is false when the purge does not concern it.
func purgeStart(filters []string, filter string, first uint64, state store.State) (uint64, bool) {
	if filter == "" {
		if first == 0 {
			first = state.LastSeq + 1
		}
		return first, true
	}
	within, overlaps := len(filters) > 0, len(filters) == 0
	for _, f := range filters {
		if !subject.SubsetOf(f, filter) {
			within = false
		}
		if subject.Overlap(f, filter) {
			overlaps = true
		}
	}
	switch {
	case within:
		// Every subject it takes was purged up to first.
		if first == 0 {
			first = state.LastSeq + 1
		}
		return first, true
	case overlaps:
		// Wider than the purge: only what the stream dropped as a whole.
		return state.FirstSeq, true
	}
	return 0, false
}
