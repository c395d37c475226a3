package jetstream

import (
	"slices"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// Headers and statuses of DIRECT.GET's batched and multi-subject forms, as
// nats-server v2.15.2 sends them.
const (
	hdrNumPending   = "Nats-Num-Pending"
	hdrUpToSeq      = "Nats-UpTo-Sequence"
	hdrLastSequence = "Nats-Last-Sequence"

	// maxMultiLast is the most subjects one multi_last request may answer;
	// more gets a 413 (nats-server's fixed limit).
	maxMultiLast = 1024
)

var (
	hdrNoResults      = statusHeader(404, "No Results")
	hdrTooManyResults = statusHeader(413, "Too Many Results")
)

// directReplyBudget is how many bytes (subject, stored header and payload)
// one batched or multi-subject reply may carry before it stops early:
// max_bytes when the request sets it, else the server's per-client pending
// limit, as nats-server does. A negative max_bytes is kept as nats-server
// keeps it: the reply stops after its first message.
func (js *JetStream) directReplyBudget(req *api.MsgGetRequest) int {
	if req.MaxBytes != 0 {
		return req.MaxBytes
	}
	return int(js.srv.Options().MaxPending)
}

// batchHeader builds the header of one message of a batched or multi-subject
// reply: the stored headers, the four of a single get, then Nats-Num-Pending
// (matching messages still to come after this one) and Nats-Last-Sequence
// (the sequence of the previous message of this reply, 0 for the first).
func batchHeader(orig []byte, stream string, m *store.Msg, pending, prev uint64) []byte {
	buf := make([]byte, 0, len(orig)+192+len(stream)+len(m.Subject))
	buf = natshdr.Reopen(buf, orig)
	buf = natshdr.AppendString(buf, hdrStream, stream)
	buf = natshdr.AppendString(buf, hdrSubject, m.Subject)
	buf = natshdr.AppendUint(buf, hdrSequence, m.Seq)
	buf = natshdr.AppendString(buf, hdrTimeStamp, time.Unix(0, m.Time).UTC().Format(time.RFC3339Nano))
	buf = natshdr.AppendUint(buf, hdrNumPending, pending)
	buf = natshdr.AppendUint(buf, hdrLastSequence, prev)
	return natshdr.End(buf)
}

// eobHeader is the status that closes a batched reply: 204 "EOB" with the
// count still pending and the last sequence sent; a multi-subject reply
// adds the sequence it was answered up to (upTo > 0).
func eobHeader(pending, last, upTo uint64) []byte {
	buf := natshdr.AppendStart(make([]byte, 0, 128), 204, "EOB")
	buf = natshdr.AppendUint(buf, hdrNumPending, pending)
	buf = natshdr.AppendUint(buf, hdrLastSequence, last)
	if upTo > 0 {
		buf = natshdr.AppendUint(buf, hdrUpToSeq, upTo)
	}
	return natshdr.End(buf)
}

// directGetBatch answers a DIRECT.GET with a batch (nats-server's batch
// form is any batch but 0; a negative one sends no message, only the EOB
// with the pending count): up to batch messages
// from seq (or the first at or after start_time), those on next_by_subj
// only when it is set, each with the batch headers, then the EOB status.
// It stops early at the end of the stream or once max_bytes is reached.
// If not even the first message exists the reply is a lone 404.
func (js *JetStream) directGetBatch(s *stream, req *api.MsgGetRequest, reply string) {
	st := s.reader()
	seq := req.Seq
	if req.StartTime != nil {
		seq = st.SeqForTime(*req.StartTime)
	}
	filter := req.NextFor
	if filter != "" && !subject.ValidFilter(filter) {
		js.srv.Publish(reply, "", hdrNotFound, nil)
		return
	}
	// validThrough is the last sequence the pending count saw; if the
	// stream grows during the reply the EOB count is taken again.
	validThrough := st.State().LastSeq
	pending := st.NumPending(max(seq, 1), filter, false)
	budget := js.directReplyBudget(req)
	var (
		m         store.Msg
		last      uint64
		sentBytes int
	)
	for i := 0; i < req.Batch; i++ {
		if err := st.LoadNext(filter, max(seq, 1), &m); err != nil {
			if i == 0 {
				js.srv.Publish(reply, "", hdrNotFound, nil)
				return
			}
			break
		}
		seq = m.Seq + 1
		var hdr []byte
		if !req.NoHeaders {
			// nats-server counts the pending messages down only on replies
			// that carry headers; with no_hdr the EOB keeps the first count.
			if pending > 0 {
				pending--
			}
			hdr = batchHeader(m.Header, s.name, &m, pending, last)
		}
		last = m.Seq
		js.srv.Publish(reply, "", hdr, m.Data)
		sentBytes += len(m.Subject) + len(m.Header) + len(m.Data)
		if sentBytes >= budget {
			break
		}
	}
	if st.State().LastSeq > validThrough {
		pending = st.NumPending(max(seq, 1), filter, false)
	}
	js.srv.Publish(reply, "", eobHeader(pending, last, 0), nil)
}

// directGetMulti answers a DIRECT.GET with multi_last: the last message of
// every subject matching any of the filters, at or below up_to_seq (or the
// last sequence stored before up_to_time, or the stream's last sequence),
// in sequence order, skipping those below seq, then an EOB status that also
// names the sequence answered up to. More than maxMultiLast subjects get a
// 413, none a 404 "No Results". batch and max_bytes cut the reply short.
// Like nats-server it always sends headers, no_hdr or not.
func (js *JetStream) directGetMulti(s *stream, req *api.MsgGetRequest, reply string) {
	st := s.reader()
	upTo := req.UpToSeq
	if req.UpToTime != nil {
		state := st.State()
		upTo = st.SeqForTime(*req.UpToTime)
		if upTo <= state.FirstSeq {
			js.srv.Publish(reply, "", hdrNoResults, nil)
			return
		}
		upTo-- // the last sequence stored before up_to_time
	}
	if upTo == 0 {
		upTo = st.State().LastSeq
	}
	seqs, tooMany := multiLastSeqs(st, req.MultiLastFor, upTo)
	if tooMany {
		js.srv.Publish(reply, "", hdrTooManyResults, nil)
		return
	}
	if len(seqs) == 0 {
		js.srv.Publish(reply, "", hdrNoResults, nil)
		return
	}
	budget := js.directReplyBudget(req)
	var (
		m               store.Msg
		last            uint64
		sentBytes, sent int
	)
	pending := uint64(len(seqs))
	for _, seq := range seqs {
		pending--
		if seq < req.Seq {
			continue
		}
		if err := st.Load(seq, &m); err != nil {
			// Removed since it was listed: nats-server folds any load
			// failure into a 404, whatever was sent before it.
			js.srv.Publish(reply, "", hdrNotFound, nil)
			return
		}
		js.srv.Publish(reply, "", batchHeader(m.Header, s.name, &m, pending, last), m.Data)
		last = m.Seq
		sentBytes += len(m.Subject) + len(m.Header) + len(m.Data)
		if sentBytes >= budget {
			break
		}
		sent++
		if req.Batch > 0 && sent >= req.Batch {
			break
		}
	}
	js.srv.Publish(reply, "", eobHeader(pending, last, upTo), nil)
}

// multiLastSeqs lists, in ascending order and without repeats, the sequence
// of the last message at or below upTo of each subject matching any of
// filters. An invalid filter matches nothing. tooMany reports that the list
// passed maxMultiLast after some filter, which ends the search.
func multiLastSeqs(st msgReader, filters []string, upTo uint64) (seqs []uint64, tooMany bool) {
	seen := make(map[uint64]struct{})
	var m store.Msg
	for _, f := range filters {
		if !subject.ValidFilter(f) {
			continue
		}
		for subj, ss := range st.SubjectsState(f) {
			seq := ss.Last
			if seq > upTo {
				if ss.First > upTo {
					continue
				}
				if st.LoadPrev(subj, upTo, &m) != nil {
					continue
				}
				seq = m.Seq
			}
			if _, dup := seen[seq]; !dup {
				seen[seq] = struct{}{}
				seqs = append(seqs, seq)
			}
		}
		if len(seqs) > maxMultiLast {
			return nil, true
		}
	}
	slices.Sort(seqs)
	return seqs, false
}
