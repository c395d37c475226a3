package jetstream

import (
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/subject"
	"github.com/jetwal/jetwal/subject/transform"
)

// hdrMsgSize is the payload size a headers-only republish sends instead of
// the payload.
const hdrMsgSize = "Nats-Msg-Size"

// streamXforms are a stream's compiled subject_transform (in) and republish
// (rp) mappings; nil when the stream has none. Guarded by the stream's
// cfgMu, replaced with its config.
type streamXforms struct {
	in, rp     *transform.Transform
	rpHdrsOnly bool
}

// newXforms compiles the mappings of a checked config.
func newXforms(cfg *api.StreamConfig) (x streamXforms, err error) {
	if tr := cfg.SubjectTransform; tr != nil {
		if x.in, err = transform.New(tr.Source, tr.Destination); err != nil {
			return streamXforms{}, err
		}
	}
	if rp := cfg.RePublish; rp != nil {
		if x.rp, err = transform.New(rp.Source, rp.Destination); err != nil {
			return streamXforms{}, err
		}
		x.rpHdrsOnly = rp.HeadersOnly
	}
	return x, nil
}

// storedSubject is the subject a message published to subj is stored
// under: subj transformed when it matches the stream's subject_transform.
func (x *streamXforms) storedSubject(subj string) string {
	if x.in == nil {
		return subj
	}
	if out, err := x.in.Match(subj); err == nil {
		return out
	}
	return subj
}

// republishTarget is where a stored message is republished to; the zero
// value means nowhere.
type republishTarget struct {
	subject     string
	headersOnly bool
}

// target returns where a message stored under subj is republished.
// nats-server skips (and logs) a mapped subject one cannot publish to;
// wildcard tokens it can (see subject.ValidPublish).
func (x *streamXforms) target(subj string) republishTarget {
	if x.rp == nil {
		return republishTarget{}
	}
	out, err := x.rp.Match(subj)
	if err != nil || !subject.ValidPublish(out) {
		return republishTarget{}
	}
	return republishTarget{subject: out, headersOnly: x.rpHdrsOnly}
}

// republishMsg is what a republish needs of a message being appended.
type republishMsg struct {
	republishTarget
	hdr, data []byte // data is nil for headers_only
	size      int    // the payload's size, for headers_only
	lastSeq   uint64 // the previous message on the same subject, 0 if none
}

// newRepublish copies what the republish of a message needs once it is
// stored. Caller holds mu, so the previous sequence of its subject is
// final.
func (s *stream) newRepublish(t republishTarget, subj string, hdr, data []byte) *republishMsg {
	rp := &republishMsg{republishTarget: t, lastSeq: s.lastSeqForSubject(subj), size: len(data)}
	rp.hdr = append([]byte(nil), hdr...)
	if !t.headersOnly {
		rp.data = append([]byte(nil), data...)
	}
	return rp
}

// republish sends a stored message to its republish subject with the
// stream's headers after its own: Nats-Stream, Nats-Subject, Nats-Sequence,
// Nats-Time-Stamp, Nats-Last-Sequence, and for headers_only Nats-Msg-Size
// in place of the payload.
func (s *stream) republish(rp *republishMsg, subj string, seq uint64, ts int64) {
	buf := make([]byte, 0, len(rp.hdr)+192+len(s.name)+len(subj))
	buf = natshdr.Reopen(buf, rp.hdr)
	buf = natshdr.AppendString(buf, hdrStream, s.name)
	buf = natshdr.AppendString(buf, hdrSubject, subj)
	buf = natshdr.AppendUint(buf, hdrSequence, seq)
	buf = natshdr.AppendString(buf, hdrTimeStamp, time.Unix(0, ts).UTC().Format(time.RFC3339Nano))
	buf = natshdr.AppendUint(buf, hdrLastSequence, rp.lastSeq)
	if rp.headersOnly {
		buf = natshdr.AppendInt(buf, hdrMsgSize, int64(rp.size))
	}
	s.env.srv.Publish(rp.subject, "", natshdr.End(buf), rp.data)
}
