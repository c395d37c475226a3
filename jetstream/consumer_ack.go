package jetstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// ackKind is what an ack message asks for.
type ackKind uint8

const (
	ackAck ackKind = iota
	ackNak
	ackProgress
	ackNext
	ackTerm
)

// parseAck reads an ack body: "" or +ACK, -NAK [{"delay":ns}], +WPI,
// +NXT [request], +TERM [reason]. rest is what follows the keyword.
func parseAck(b []byte) (kind ackKind, rest []byte, ok bool) {
	b = bytes.TrimLeft(b, " \t")
	word := b
	if i := bytes.IndexAny(b, " \t\r\n"); i >= 0 {
		word, rest = b[:i], bytes.TrimSpace(b[i:])
	}
	switch string(word) {
	case "", "+ACK":
		return ackAck, rest, true
	case "-NAK":
		return ackNak, rest, true
	case "+WPI":
		return ackProgress, rest, true
	case "+NXT":
		return ackNext, rest, true
	case "+TERM":
		return ackTerm, rest, true
	}
	return 0, nil, false
}

// parseAckSubject splits $JS.ACK.<stream>.<consumer>.<dc>.<sseq>.<cseq>.<ts>.<pending>
// (and the 12-token form with domain and account hash) without allocating.
func parseAckSubject(subj string) (stream, name string, sseq uint64, ok bool) {
	var tok [12]string
	n := 0
	for rest := subj; ; n++ {
		if n == len(tok) {
			return "", "", 0, false
		}
		i := strings.IndexByte(rest, '.')
		if i < 0 {
			tok[n] = rest
			n++
			break
		}
		tok[n], rest = rest[:i], rest[i+1:]
	}
	parts := tok[:n]
	switch n {
	case 9:
	case 11, 12:
		// $JS.ACK.<domain>.<account hash>.<stream>.<consumer>.…
		parts = tok[2:n]
		parts[0], parts[1] = tok[0], tok[1]
	default:
		return "", "", 0, false
	}
	seq, err := strconv.ParseUint(parts[5], 10, 64)
	if err != nil || seq == 0 {
		return "", "", 0, false
	}
	return parts[2], parts[3], seq, true
}

// ackSeq reads the stream sequence from the tail of a 9-token ack subject
// once its "$JS.ACK.<stream>.<consumer>." prefix is known:
// <dc>.<sseq>.<cseq>.<ts>.<pending>.
func ackSeq(tail string) (uint64, bool) {
	var tok [5]string
	n := 0
	for rest := tail; ; n++ {
		if n == len(tok) {
			return 0, false
		}
		i := strings.IndexByte(rest, '.')
		if i < 0 {
			tok[n] = rest
			n++
			break
		}
		tok[n], rest = rest[:i], rest[i+1:]
	}
	if n != 5 {
		return 0, false
	}
	seq, err := strconv.ParseUint(tok[1], 10, 64)
	return seq, err == nil && seq > 0
}

// ackTarget finds the consumer and stream sequence an ack subject names.
func (cm *consumerManager) ackTarget(subj string) (*consumer, uint64) {
	if c := cm.lastAcked.Load(); c != nil && !c.gone.Load() && strings.HasPrefix(subj, c.ackPrefix) {
		if seq, ok := ackSeq(subj[len(c.ackPrefix):]); ok {
			return c, seq
		}
	}
	stream, name, sseq, ok := parseAckSubject(subj)
	if !ok {
		return nil, 0
	}
	s := cm.js.lookup(stream)
	if s == nil {
		return nil, 0
	}
	c := s.cons.get(name)
	if c == nil {
		return nil, 0
	}
	cm.lastAcked.Store(c)
	return c, sseq
}

// handleAck is the $JS.ACK.> handler. It runs on the acking client's
// goroutine and only touches memory, except for a confirmed ack under sync
// always, whose flush runs on a worker.
func (cm *consumerManager) handleAck(m *server.Msg) {
	c, sseq := cm.ackTarget(m.Subject)
	if c == nil || c.noAcks {
		cm.notTaken(m, c == nil)
		return
	}
	kind, rest, ok := parseAck(m.Data)
	if !ok {
		return
	}
	var delay time.Duration
	if kind == ackNak && len(rest) > 0 {
		var d struct {
			Delay time.Duration `json:"delay"`
		}
		if rest[0] == '{' {
			if json.Unmarshal(rest, &d) == nil {
				delay = d.Delay
			}
		} else if v, err := time.ParseDuration(string(rest)); err == nil {
			delay = v
		}
	}
	out := c.applyAck(kind, consumerstate.StreamSeq(sseq), delay)
	if out.closed {
		// The consumer stopped between ackTarget and applyAck (deleted, or
		// its stream's leadership moved to another server): nothing was
		// applied, so nothing may be confirmed.
		cm.notTaken(m, true)
		return
	}
	if kind == ackTerm || out.wasPending && (kind == ackNak || out.sample) {
		c.adviseAck(kind, m.Subject, sseq, rest, out)
	}
	switch {
	case kind == ackNext:
		c.addRequest(strings.Clone(m.Reply), rest)
	case m.Reply != "":
		cm.confirm(c, strings.Clone(m.Reply))
	}
}

// notTaken answers an ack no consumer here takes (absent: none by its
// name, or one closed since it was found; otherwise one that takes no
// acks). nats-server subscribes acks only
// for consumers that take them: whoever asks for a reply gets a
// no-responders status. In a cluster every server sees acks, and an absent
// consumer's is answered by the server that serves its stream.
func (cm *consumerManager) notTaken(m *server.Msg, absent bool) {
	if absent && cm.js.cl != nil && !cm.js.servesStream(ackStream(m.Subject)) {
		return
	}
	cm.js.noResponders(m.Subject, m.Reply)
}

// hdrAckNotPersisted answers a double ack whose state could not be written.
var hdrAckNotPersisted = statusHeader(503, "Ack Not Persisted")

// confirm answers an ack that asked for a reply once the consumer's state
// holds it durably under the sync policy: fsynced under sync always, written
// to the operating system otherwise (as PubAcks are). An ack whose state
// could not be persisted is never confirmed: the client's double ack fails.
// Memory consumers answer at once.
func (cm *consumerManager) confirm(c *consumer, reply string) {
	var persist func() error
	switch {
	case c.cs == nil && c.s.rep != nil:
		persist = func() error { return cm.js.confirmReplicated(c) }
	case c.cs == nil:
		cm.js.srv.Publish(reply, "", nil, nil)
		return
	case cm.js.cfg.Sync == wal.SyncAlways:
		persist = c.cs.Flush
	default:
		persist = c.cs.Write
	}
	if !cm.flushes.submit(func() {
		if err := persist(); err != nil {
			cm.js.log.Error("consumer state not persisted, ack refused", "stream", c.s.name, "consumer", c.name, "error", err)
			// A status reply: nats.go's double ack reports it as an error
			// (as it does nats-server's 503 for an ack nobody takes).
			cm.js.srv.Publish(reply, "", hdrAckNotPersisted, nil)
			return
		}
		cm.js.srv.Publish(reply, "", nil, nil)
	}) {
		cm.js.log.Warn("consumer flush queue closed, ack left unconfirmed", "stream", c.s.name, "consumer", c.name)
	}
}

// applyAck changes the consumer's state for one ack message, and says what
// it found for the advisories (advisory_consumer.go).
func (c *consumer) applyAck(kind ackKind, sseq consumerstate.StreamSeq, delay time.Duration) (out ackOutcome) {
	now := time.Now().UnixNano()
	var one [1]uint64 // a single ack finishes one message: no allocation
	done := one[:0]
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		out.closed = true
		return out
	}
	c.active = now
	policy := c.cfg.AckPolicy
	wake := kind == ackNak || kind == ackNext
	c.withState(func(st *consumerstate.State) {
		// An ack frees room only for a consumer held back by max_ack_pending
		// with someone to deliver to; other acks need no round.
		if !wake && c.cfg.MaxAckPending > 0 && c.ackPending(st) >= c.cfg.MaxAckPending &&
			(len(c.waiting) > 0 || c.push) {
			wake = true
		}
		switch kind {
		case ackAck, ackNext:
			switch policy {
			case api.AckAll:
				for seq := range st.Pending {
					if seq <= sseq {
						done = append(done, uint64(seq))
					}
				}
				st.AckAll(sseq)
			case api.AckExplicit:
				if c.sampleFreq > 0 && sampled(c.sampleFreq) {
					p, ok := st.Pending[sseq]
					out = ackOutcome{wasPending: ok, deliveredAt: p.Timestamp, sample: true}
				}
				if st.Ack(sseq) {
					done = append(done, uint64(sseq))
				}
			}
		case ackTerm:
			if st.Term(sseq) {
				done = append(done, uint64(sseq))
			}
		case ackNak:
			at := addSat(now, int64(delay))
			if st.Nak(sseq, at) {
				out.wasPending = true
				if c.dueAt == 0 || at < c.dueAt {
					c.dueAt = at
				}
			}
		case ackProgress:
			if _, ok := st.Pending[sseq]; ok {
				if c.progress == nil {
					c.progress = make(map[consumerstate.StreamSeq]int64)
				}
				c.progress[sseq] = now
			}
		}
		if len(done) > 0 {
			c.exhaustedDone(st)
		}
	})
	if len(done) > 0 {
		c.lastAck = time.Unix(0, now)
		for _, q := range done {
			delete(c.progress, consumerstate.StreamSeq(q))
		}
	}
	c.mu.Unlock()
	if len(done) > 0 {
		c.s.retire(c, done)
	}
	if wake {
		c.signal()
	}
	return out
}

// ackStream is the stream named by an ack subject ($JS.ACK.<stream>.…).
func ackStream(subj string) string {
	rest := strings.TrimPrefix(subj, "$JS.ACK.")
	name, _, _ := strings.Cut(rest, ".")
	return name
}
