package jetstream

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
)

// batchAppender is a store that stores several messages as one: visible
// together, and (wal with atomic batches) kept or lost together by a crash.
type batchAppender interface {
	AppendBatch(msgs []store.Msg) (int, error)
}

// checkedMsg is a staged message that passed the commit's checks.
type checkedMsg struct {
	ttl    time.Duration
	rollup byte
	msgID  string
	rp     republishTarget
	val    string     // a counter's new value ("" otherwise)
	sched  *schedNote // what it means to the schedule table (schedule.go)
}

// commitBatch checks a complete batch as nats-server does and stores it as
// one. The publisher's checks see the batch as a whole: an expected last
// sequence only on its first message, an expected subject sequence not on
// a subject the batch already wrote, a message id not repeated.
func (s *stream) commitBatch(id string, staged []stagedMsg, reply string) {
	s.cfgMu.RLock()
	cfg := &s.cfg
	allowAtomic, sealed, allowRollup, allowTTL, maxSize := cfg.AllowAtomicPublish, cfg.Sealed, cfg.AllowRollup, cfg.AllowMsgTTL, cfg.MaxMsgSize
	counters := cfg.AllowMsgCounter
	xf := s.xf
	s.cfgMu.RUnlock()
	switch {
	case !allowAtomic:
		s.replyError(reply, api.NewError(api.ErrAtomicPublishDisabled))
		return
	case sealed:
		s.replyError(reply, api.NewError(api.ErrStreamSealed))
		return
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.replyError(reply, api.NewError(api.ErrStreamNotFound))
		return
	}
	if s.resync.Load() {
		s.resyncLocked()
	}
	msgs := make([]store.Msg, len(staged))
	checked := make([]checkedMsg, len(staged))
	written := make(map[string]bool, len(staged)) // subjects the batch stores
	ids := make(map[string]bool)
	var running map[string]string // counter values the batch reached, by subject
	if counters {
		running = make(map[string]string)
	}
	for i := range staged {
		st := &staged[i]
		subj := xf.storedSubject(st.subject)
		c, aerr := s.checkBatchMsg(i, subj, st, written, ids, allowRollup, allowTTL, running, maxSize)
		if aerr != nil {
			s.mu.Unlock()
			s.replyError(reply, aerr)
			return
		}
		c.rp = xf.target(subj)
		checked[i] = c
		written[subj] = true
		msgs[i] = store.Msg{Subject: subj, Header: st.hdr, Data: st.data}
		if c.val != "" {
			msgs[i].Data = counterBody(c.val)
		}
	}
	rps := make([]*republishMsg, len(msgs))
	for i := range msgs {
		if checked[i].rp.subject != "" {
			rps[i] = s.newRepublish(checked[i].rp, msgs[i].Subject, msgs[i].Header, msgs[i].Data)
		}
	}

	first := s.lastSeq + 1
	err := s.appendBatch(msgs)
	if err != nil {
		s.mu.Unlock()
		s.resync.Store(true)
		s.replyError(reply, storeError(err))
		return
	}
	last := msgs[len(msgs)-1].Seq
	if msgs[0].Seq != first {
		s.resync.Store(true)
	}
	s.lastSeq = last
	s.pmu.Lock()
	for i := range msgs {
		m, c := &msgs[i], &checked[i]
		if c.msgID != "" {
			s.dedup.Add(c.msgID, m.Seq, m.Time, false)
			s.lastMsgID = c.msgID
		} else {
			s.lastMsgID = ""
		}
		if c.ttl > 0 {
			s.ttls.add(m.Time+int64(c.ttl), m.Seq)
			s.ttlChanged = true
			s.exp.arm(m.Time + int64(c.ttl))
		}
		s.armAgeExpiry(m.Time)
		s.scheduleStored(m.Subject, m.Seq, c.sched) // schedule.go
		s.watch.notify()
		if !s.notifyConsumers(m.Subject) {
			s.storedUnwanted(m.Seq)
		}
	}
	s.pmu.Unlock()
	for i := range msgs {
		if checked[i].val != "" {
			s.rememberCounter(msgs[i].Subject, msgs[i].Seq, checked[i].val)
		}
	}
	s.mu.Unlock()

	for i := range msgs {
		if rps[i] != nil {
			s.republish(rps[i], msgs[i].Subject, msgs[i].Seq, msgs[i].Time)
		}
		if r := checked[i].rollup; r != 0 {
			filter := msgs[i].Subject
			if r == 'a' {
				filter = ""
			}
			if _, err := s.store.Purge(filter, msgs[i].Seq, 0); err != nil {
				s.replyError(reply, api.Errorf(api.ErrStreamRollupFailed, "rollup failed: %v", err))
				return
			}
		}
	}
	if reply != "" {
		s.env.srv.Publish(reply, "", nil, appendBatchPubAck(nil, s.ackPre, last, id, len(msgs)))
	}
}

// appendBatch stores msgs as one. A store that stored only a prefix (a
// limit reached mid-batch) has it taken back. Caller holds mu, so nothing
// else was appended behind the batch.
func (s *stream) appendBatch(msgs []store.Msg) error {
	ba, ok := s.store.(batchAppender)
	if !ok {
		return fmt.Errorf("the stream's store cannot append a batch atomically")
	}
	n, err := ba.AppendBatch(msgs)
	if err == nil {
		return nil
	}
	if n > 0 {
		if terr := s.store.Truncate(msgs[0].Seq - 1); terr != nil && !errors.Is(terr, store.ErrClosed) {
			s.env.log.Warn("taking back a partly stored batch", "stream", s.name, "from", msgs[0].Seq, "error", terr)
		}
	}
	return err
}

// checkBatchMsg applies the publish checks to message i of a batch, stored
// under subj. Caller holds mu.
// On a counter stream running holds the values the batch's earlier
// increments reached (nil on other streams).
func (s *stream) checkBatchMsg(i int, subj string, st *stagedMsg, written, ids map[string]bool, allowRollup, allowTTL bool, running map[string]string, maxSize int32) (checkedMsg, *api.ApiError) {
	var c checkedMsg
	if len(st.hdr) > maxHdrSz {
		return c, api.NewError(api.ErrHeaderExceedsMaximum)
	}
	if maxSize >= 0 && len(st.hdr)+len(st.data) > int(maxSize) {
		return c, api.NewError(api.ErrMessageExceedsMaximum)
	}
	h := parsePubHeaders(st.hdr)
	if h.hasExpLastMsgI {
		return c, api.Errorf(api.ErrAtomicPublishUnsupportedHeader, "atomic publish unsupported header used: %s", hdrExpectedLastID)
	}
	incr, aerr := checkIncr(&h, running != nil, len(st.data))
	if aerr != nil {
		return c, aerr
	}
	if incr != nil {
		val, ok := running[subj]
		if ok {
			base, _ := new(big.Int).SetString(val, 10)
			val = base.Add(base, incr).String()
		} else if val, aerr = s.counterNext(subj, incr); aerr != nil {
			return c, aerr
		}
		running[subj] = val
		c.val = val
	}
	if len(h.ttl) > 0 {
		if !allowTTL {
			return c, api.NewError(api.ErrMessageTTLDisabled)
		}
		ttl, err := parseMsgTTL(string(h.ttl))
		if err != nil {
			return c, api.NewError(api.ErrMessageTTLInvalid)
		}
		c.ttl = max(ttl, 0)
	}
	if len(h.msgID) > 0 {
		id := string(h.msgID)
		if ids[id] {
			return c, api.NewError(api.ErrAtomicPublishDuplicateMsg)
		}
		s.pmu.Lock()
		e := s.dedup.Lookup(id)
		s.pmu.Unlock()
		switch {
		case e != nil && e.Pending:
			return c, api.NewError(api.ErrStreamDuplicateMessageConflict)
		case e != nil:
			return c, api.NewError(api.ErrAtomicPublishDuplicateMsg)
		}
		ids[id] = true
		c.msgID = id
	}
	if len(h.expStream) > 0 && string(h.expStream) != s.name {
		return c, api.NewError(api.ErrStreamNotMatch)
	}
	if h.hasExpLastSeq {
		// As nats-server, message i is checked against the sequence the
		// batch has reached; only the first message may carry one.
		want, ok := parseSeq(h.expLastSeq)
		if at := s.lastSeq + uint64(i); !ok || want != at {
			return c, api.Errorf(api.ErrStreamWrongLastSequence, "wrong last sequence: %d", at)
		}
		if i > 0 {
			return c, api.NewError(api.ErrStreamWrongLastSequenceConst)
		}
	}
	if h.hasExpSubjSeq {
		filter := subj
		if len(h.expSubjSubj) > 0 {
			filter = string(h.expSubjSubj)
		}
		if written[filter] {
			return c, api.NewError(api.ErrStreamWrongLastSequenceConst)
		}
		want, ok := parseSeq(h.expSubjSeq)
		if got := s.lastSeqForSubject(filter); !ok || got != want {
			return c, api.Errorf(api.ErrStreamWrongLastSequence, "wrong last sequence: %d", got)
		}
	}
	if h.hasSched {
		// The schedule checks (schedule_publish.go) may add a rollup.
		m, note, aerr := s.checkSchedule(&server.Msg{Subject: subj, Header: st.hdr, Data: st.data}, &h, s.schedPolicy())
		if aerr != nil {
			return c, aerr
		}
		st.hdr, c.sched = m.Header, note
	}
	if len(h.rollup) > 0 {
		switch {
		case !allowRollup:
			return c, api.Errorf(api.ErrStreamRollupFailed, "rollup not permitted")
		case string(h.rollup) == rollupSubject:
			c.rollup = 's'
		case string(h.rollup) == rollupAll:
			c.rollup = 'a'
		default:
			return c, api.Errorf(api.ErrStreamRollupFailed, "rollup value invalid: %q", h.rollup)
		}
	}
	return c, nil
}
