package jetstream

import (
	"encoding/json"
	"strconv"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
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
	s.fast.mu.Lock()
	m, mark := s.fastStep(m, reply, &ref, &out)
	s.fastUnlockSend(&out)
	if mark == nil {
		return
	}
	// The append runs without the batch lock: the store's completion of
	// an earlier message (fastStored) takes it, and an append may wait for
	// the store.
	res, aerr := s.fastAppend(m, pc, mark)
	if aerr != nil || res.dup {
		out = fastOut{}
		s.fast.mu.Lock()
		s.fastNotStored(mark, reply, &ref, res, aerr, &out)
		s.fastUnlockSend(&out)
	}
	if res != nil {
		s.finishAppend(res)
	}
}

// fastStep moves batch ref.id on by message m, collecting what to send in
// out. It returns the message to store (without a Nats-Required-Api-Level
// header) and its mark, or a nil mark when m only reports or ends the
// batch. Caller holds s.fast.mu.
func (s *stream) fastStep(m *server.Msg, reply string, ref *fastRef, out *fastOut) (*server.Msg, *fastMark) {
	fs := &s.fast
	to := m.Reply
	idle := s.env.cfg.waits.batchIdle
	b := fs.open[ref.id]
	if b == nil {
		if ref.seq != 1 {
			s.fastRefuse(out, reply, api.NewError(api.ErrBatchPublishUnknownBatchID))
			return m, nil
		}
		var aerr *api.ApiError
		if b, aerr = fs.openLocked(ref.id, ref, idle, s.env.cfg.staged); aerr != nil {
			s.fastRefuse(out, reply, aerr)
			return m, nil
		}
	}
	if headerValue(m.Header, apiserver.HdrRequiredLevel) != nil {
		// As nats-server: a level jetwal lacks drops the batch; the
		// header itself is never stored.
		if apiserver.LevelTooLow(m.Header) {
			fs.dropLocked(ref.id, b)
			s.fastRefuse(out, reply, api.NewError(api.ErrRequiredApiLevel))
			return m, nil
		}
		cm := *m
		cm.Header = withoutHeader(m.Header, apiserver.HdrRequiredLevel, 0)
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
		return m, nil
	}
	if b.commit {
		return m, nil // ending: the publisher waits for the PubAck
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
			return m, nil
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
			return m, nil
		}
	}
	if ref.seq == 1 && reply != "" && !ref.commits() {
		b.flowAck(out, to, 0) // the first message learns the ack interval
	}
	b.pending++
	return m, &fastMark{id: ref.id, b: b, seq: ref.seq, reply: to}
}

// fastNotStored moves the batch on after its message mark was refused
// (aerr) or found to be a duplicate, as nats-server does. Caller holds
// s.fast.mu.
func (s *stream) fastNotStored(mark *fastMark, reply string, ref *fastRef, res *pubResult, aerr *api.ApiError, out *fastOut) {
	fs := &s.fast
	b, to := mark.b, mark.reply
	if res != nil {
		for _, w := range res.errWaiters {
			s.fastRefuse(out, w, res.aerr)
		}
	}
	if fs.open[mark.id] != b || b.timer == nil {
		return // dropped meanwhile
	}
	b.pending--
	dup := aerr == nil
	if dup && b.pending == 0 {
		b.pseq = ref.seq
		b.checkFlow(out, to, len(fs.open))
	}
	if dup && !ref.commits() {
		return
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
		return
	}
	if aerr != nil {
		s.fastErrMsg(out, to, ref.seq, aerr)
		if b.gapOK && !ref.commits() {
			return
		}
		b.lseq--
		if b.pending == 0 {
			b.pseq = b.lseq
		}
	}
	if s.fastCommitLocked(out, ref.id, b, to) {
		fs.dropLocked(ref.id, b)
	}
}

// fastRefuse appends the error PubAck of a refused fast batch message.
func (s *stream) fastRefuse(out *fastOut, reply string, aerr *api.ApiError) {
	if reply == "" {
		return
	}
	b, err := json.Marshal(api.PubAckResponse{Error: aerr, PubAck: &api.PubAck{Stream: s.name, Domain: s.env.cfg.Domain}})
	if err == nil {
		out.add(reply, s.js.api.HidePaths(b))
	}
}

// fastAppend applies a plain publish's header checks to m and hands it to
// the store; the completion goes to fastStored, not to a PubAck. It
// returns the refusal, or the result of the append (res.dup for a
// Nats-Msg-Id already in the duplicate window). Caller does not hold
// s.fast.mu.
func (s *stream) fastAppend(m *server.Msg, pc *pubConfig, mark *fastMark) (*pubResult, *api.ApiError) {
	var pp pubPlan
	if aerr := s.checkHeaders(m, pc, &pp); aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkPlan(pc, &pp); aerr != nil {
		return nil, aerr
	}
	pp.h.fast = mark
	res := s.appendMsg(pp.m, &pp.h, "", pp.rollup, max(pp.ttl, 0), pc.xf.target(pp.m.Subject), pp.incr)
	return &res, res.aerr
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
			out.add(b.ender, appendBatchPubAck(nil, s.ackPre, b.sseq, mark.id, int(b.lseq)))
		} else {
			b.checkFlow(&out, mark.reply, len(fs.open))
		}
	}
	s.fastUnlockSend(&out)
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
	s.fastUnlockSend(&out)
}
