package jetstream

import (
	"encoding/json"
	"strconv"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// fastMark follows a fast batch message through its append, so its
// completion can move the batch on (fastStored).
type fastMark struct {
	id    string
	b     *fastBatch
	seq   uint64 // batch sequence
	reply string
}

// handleFastBatchMsg takes one message whose reply subject names a fast
// batch (fastbatch.go), in nats-server's order of checks and answers.
// reply is "" on a no_ack stream; the batch's reports still go to
// m.Reply, as nats-server sends them.
func (s *stream) handleFastBatchMsg(m *server.Msg, reply string, ref fastRef, valid bool, pc *pubConfig) {
	aerr := s.checkMsgLimits(m, pc)
	switch {
	case aerr != nil:
	case !pc.allowFast:
		aerr = api.NewError(api.ErrBatchPublishDisabled)
	case !valid:
		aerr = api.NewError(api.ErrBatchPublishInvalidPattern)
	case len(ref.id) > maxBatchIDLen:
		aerr = api.NewError(api.ErrBatchPublishInvalidBatchID)
	}
	if aerr != nil {
		s.replyError(reply, aerr)
		return
	}
	var out fastOut
	res := s.fastStep(m, m.Reply, reply, &ref, pc, &out)
	s.sendFast(&out)
	if res != nil {
		s.finishAppend(res)
	}
}

// fastStep moves batch ref.id on by message m and, unless it only reports,
// stores m. Messages to send are collected in out; the append's inline
// completions are returned for finishAppend, which must run after the
// batch lock is released.
func (s *stream) fastStep(m *server.Msg, to, reply string, ref *fastRef, pc *pubConfig, out *fastOut) *pubResult {
	fs := &s.fast
	fs.mu.Lock()
	defer fs.mu.Unlock()
	idle := s.js.cfg.waits.batchIdle
	b := fs.open[ref.id]
	if b == nil {
		if ref.seq != 1 {
			s.fastRefuse(out, reply, api.NewError(api.ErrBatchPublishUnknownBatchID))
			return nil
		}
		var aerr *api.ApiError
		if b, aerr = fs.openLocked(ref.id, ref, idle, s.js.cfg.staged); aerr != nil {
			s.fastRefuse(out, reply, aerr)
			return nil
		}
	}
	if headerValue(m.Header, hdrRequiredLevel) != nil {
		// As nats-server: a level jetwal lacks drops the batch; the
		// header itself is never stored.
		if levelTooLow(m.Header) {
			fs.dropLocked(ref.id, b)
			s.fastRefuse(out, reply, api.NewError(api.ErrRequiredApiLevel))
			return nil
		}
		cm := *m
		cm.Header = withoutHeader(m.Header, hdrRequiredLevel, 0)
		m = &cm
	}
	expired := !b.touch(idle)

	if ref.op == fastPing {
		send := true
		if ref.seq > b.lseq || expired {
			gapMsg(out, to, b.lseq+1, ref.seq+1)
			if b.gapOK && !expired {
				b.lseq = ref.seq
				if b.pending == 0 {
					b.pseq = b.lseq
				}
				send = !b.checkFlow(out, to, len(fs.open))
			} else if s.fastCommitLocked(out, ref.id, b, to) {
				fs.dropLocked(ref.id, b)
				send = false
			}
		}
		if send {
			b.flowAck(out, to, b.fseq)
		}
		return nil
	}
	if b.commit {
		return nil // ending: the publisher waits for the PubAck
	}

	b.lseq++
	if b.lseq != ref.seq || expired {
		if ref.seq > b.lseq {
			gapMsg(out, to, b.lseq, ref.seq)
		}
		if b.gapOK && !expired && ref.seq > b.lseq {
			b.lseq = ref.seq
		} else {
			b.lseq--
			if s.fastCommitLocked(out, ref.id, b, to) {
				fs.dropLocked(ref.id, b)
			}
			return nil
		}
	}
	if ref.commits() {
		if ref.op == fastCommitEOB {
			b.lseq--
			if b.pending == 0 {
				b.pseq = b.lseq
			}
		}
		done := s.fastCommitLocked(out, ref.id, b, to)
		if ref.op == fastCommitEOB {
			if done {
				fs.dropLocked(ref.id, b)
			}
			return nil
		}
	}
	if ref.seq == 1 && reply != "" && !ref.commits() {
		b.flowAck(out, to, 0) // the first message learns the ack interval
	}

	res, aerr, dup := s.fastAppend(m, pc, &fastMark{id: ref.id, b: b, seq: ref.seq, reply: to}, out)
	if aerr == nil && !dup {
		return res
	}
	if dup && b.pending == 0 {
		b.pseq = ref.seq
		b.checkFlow(out, to, len(fs.open))
	}
	if dup && !ref.commits() {
		return res
	}
	if !b.gapOK && b.lseq == 1 {
		// A refused first message is answered as a plain publish.
		fs.dropLocked(ref.id, b)
		switch {
		case aerr != nil:
			s.fastRefuse(out, reply, aerr)
		case res.dupSeq > 0 && reply != "":
			body := api.AppendPubAck(nil, s.ackPre, res.dupSeq, true)
			body = append(body[:len(body)-1], `,"batch":`...)
			body = append(body, strconv.Quote(ref.id)...)
			body = append(body, `,"count":1}`...)
			out.add(reply, body)
		}
		return res
	}
	if aerr != nil {
		s.fastErrMsg(out, to, ref.seq, aerr)
		if b.gapOK && !ref.commits() {
			return res
		}
		b.lseq--
		if b.pending == 0 {
			b.pseq = b.lseq
		}
	}
	if s.fastCommitLocked(out, ref.id, b, to) {
		fs.dropLocked(ref.id, b)
	}
	return res
}

// fastRefuse appends the error PubAck of a refused fast batch message.
func (s *stream) fastRefuse(out *fastOut, reply string, aerr *api.ApiError) {
	if reply == "" {
		return
	}
	b, err := json.Marshal(api.PubAckResponse{Error: aerr, PubAck: &api.PubAck{Stream: s.name, Domain: s.js.cfg.Domain}})
	if err == nil {
		out.add(reply, s.js.hidePaths(b))
	}
}

// fastAppend applies a plain publish's header checks to m and hands it to
// the store; the completion goes to fastStored, not to a PubAck. dup
// reports a Nats-Msg-Id already in the duplicate window. Caller holds the
// batch set's mu (the append's inline completions are returned, not run).
func (s *stream) fastAppend(m *server.Msg, pc *pubConfig, mark *fastMark, out *fastOut) (*pubResult, *api.ApiError, bool) {
	var pp pubPlan
	if aerr := s.checkHeaders(m, pc, &pp); aerr != nil {
		return nil, aerr, false
	}
	if aerr := s.checkPlan(pc, &pp); aerr != nil {
		return nil, aerr, false
	}
	pp.h.fast = mark
	mark.b.pending++
	res := s.appendMsg(pp.m, &pp.h, "", pp.rollup, max(pp.ttl, 0), pc.xf.target(pp.m.Subject), pp.incr)
	if res.aerr != nil || res.dup {
		mark.b.pending--
		for _, w := range res.errWaiters {
			s.fastRefuse(out, w, res.aerr)
		}
	}
	return &res, res.aerr, res.dup
}

// fastStored moves a batch on once one of its messages is stored at
// stream sequence seq: a flow ack when due, the PubAck when the batch is
// ending and this was its last message.
func (s *stream) fastStored(mark *fastMark, seq uint64) {
	var out fastOut
	fs := &s.fast
	fs.mu.Lock()
	b := mark.b
	if fs.open[mark.id] == b && b.timer != nil {
		b.reply = mark.reply
		if b.pending > 0 {
			b.pending--
		}
		b.sseq = seq
		if b.pending == 0 {
			b.pseq = b.lseq // nothing in flight: duplicates skipped count too
		} else {
			b.pseq = mark.seq
		}
		if b.commit && b.lseq == b.pseq {
			fs.dropLocked(mark.id, b)
			out.add(mark.reply, appendBatchPubAck(nil, s.ackPre, b.sseq, mark.id, int(b.lseq)))
		} else {
			b.checkFlow(&out, mark.reply, len(fs.open))
		}
	}
	fs.mu.Unlock()
	s.sendFast(&out)
}

// fastFailed reports a fast batch message whose append failed after it
// was accepted, and drops its batch: what is stored after it is unknown.
func (s *stream) fastFailed(mark *fastMark, aerr *api.ApiError) {
	var out fastOut
	fs := &s.fast
	fs.mu.Lock()
	if fs.open[mark.id] == mark.b {
		s.fastErrMsg(&out, mark.reply, mark.seq, aerr)
		fs.dropLocked(mark.id, mark.b)
	}
	fs.mu.Unlock()
	s.sendFast(&out)
}
