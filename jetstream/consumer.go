package jetstream

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// roundLimit is the most messages one delivery round hands out before the
// consumer's goroutine yields its lock (and re-signals itself).
const roundLimit = 256

// roundBytes is the most header and payload bytes one round loads: a round
// of large messages ends after this much, as a full round does. The round's
// messages are loaded into the consumer's buffers (bufs) and copied out only
// after it, so without this a round of 256 KiB messages held 64 MiB.
const roundBytes = 1 << 20

// bufsKeep is how much buffer capacity bufs keeps between rounds, counted
// from its first buffer: rounds of large messages fill the first few
// buffers and keep them; capacity beyond this is let go, so a consumer's
// idle memory is bounded whatever sizes it has delivered.
const bufsKeep = 2 * roundBytes

// consumer is one JetStream consumer of a stream: its config, its delivery
// and ack state (consumerstate: durable through a consumerstate.Consumer,
// in memory otherwise) and, for pull consumers, the waiting requests.
//
// Every delivery is made by the consumer's own goroutine (run), woken by
// signal: a new message in the stream, a pull request, an ack that frees
// room under max_ack_pending, interest on the deliver subject, or a timer
// for the next redelivery, expiry or heartbeat. An idle consumer is a
// goroutine blocked on a channel: it costs no CPU.
//
// Locking: mu guards everything below it. It is never held while a
// message is published; a round collects its messages and sends them after
// unlocking. Lock order: stream locks are never taken under mu, except the
// store's own (Load, LoadNext, NumPending).
type consumer struct {
	js        *JetStream // the manager, for what env does not carry (doc.go: the cycle)
	env       *env
	s         *stream
	name      string
	created   time.Time
	cs        *consumerstate.Consumer // nil: state in memory only
	ackPrefix string                  // "$JS.ACK.<stream>.<name>."
	noAcks    bool                    // ack_policy none or flow_control (no client acks), which no update changes
	events    consumerEvents          // advisory subjects (advisory_consumer.go)

	kick chan struct{} // capacity 1: "there may be work"
	stop chan struct{} // closed to end run
	done chan struct{} // closed when run returned

	mu      sync.Mutex
	cfg     api.ConsumerConfig
	filters []string // empty: the whole stream
	// overlap: two filters share subjects (a.*.c and a.b.*), so pending
	// counts are taken per subject instead of summed per filter.
	overlap bool
	// filterSnap is filters for the publish path, read without mu.
	filterSnap           atomic.Pointer[[]string]
	push                 bool
	mem                  consumerstate.State // the state when cs is nil
	waiting              []*pullRequest
	progress             map[consumerstate.StreamSeq]int64 // +WPI: ack wait restarted at
	rdq                  []consumerstate.StreamSeq         // due for redelivery, ascending
	exhausted            map[consumerstate.StreamSeq]bool  // pending past max_deliver: see exhaust
	exhaustedRedelivered int                               // redelivered ones of those let go (exhaustedDone)
	dueAt                int64                             // earliest possible redelivery (0: none)
	lastDlv              time.Time
	lastAck              time.Time
	active               int64    // pull: last request or ack (unix ns)
	idleFrom             int64    // push: interest lost at (0: has interest)
	lps                  []uint64 // last_per_subject picks not yet passed
	lpsEnd               uint64
	lpsAll               []uint64 // every pick, kept in meta.inf (never changes)
	fcReply              string   // outstanding flow control request
	fcBytes              int
	lastSend             int64 // push: last message or heartbeat sent
	replay               struct{ msgTime, sentAt int64 }
	rate                 *pushRate // push: rate_limit_bps; nil without
	prio                 priority  // pull: priority groups (consumer_priority.go)
	closed               bool
	gone                 atomic.Bool    // closed, for lock-free readers (the ack fast path)
	sampleFreq           int            // sample_freq in percent (0: no ack metrics)
	maxed                []maxDelivered // past max_deliver this round, to advise

	bufs     []store.Msg // message buffers of one round
	outs     []outMsg
	replyBuf []byte   // the ack reply subjects of one round, back to back
	ackd     []uint64 // stream sequences finished in a round (retention)
}

// outMsg is a message a round sends once the lock is released.
type outMsg struct {
	route, subj, reply string
	hdr, data          []byte
	// replyAt, replyEnd locate the ack reply in the round's replyBuf
	// (replyEnd 0: reply is set, or there is none).
	replyAt, replyEnd int32
}

func newConsumer(s *stream, name string, cfg api.ConsumerConfig, created time.Time, cs *consumerstate.Consumer) *consumer {
	now := time.Now().UnixNano()
	c := &consumer{
		js:        s.js,
		env:       s.env,
		s:         s,
		name:      name,
		created:   created,
		cs:        cs,
		ackPrefix: "$JS.ACK." + s.name + "." + name + ".",
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		dueAt:     1, // scan restored pending messages on the first round
		active:    now,
		lastSend:  now, // the first idle heartbeat is one interval away
		noAcks:    cfg.AckPolicy == api.AckNone || cfg.AckPolicy == api.AckFlowControl,
		events:    newConsumerEvents(s.name, name),
	}
	c.setConfig(cfg)
	return c
}

// setConfig installs a (checked) config. Caller holds mu or owns c.
func (c *consumer) setConfig(cfg api.ConsumerConfig) {
	c.cfg = cfg
	c.filters = validate.ConsumerFilters(&cfg)
	c.overlap = false
	for i, a := range c.filters {
		for _, b := range c.filters[i+1:] {
			if subject.Overlap(a, b) {
				c.overlap = true
			}
		}
	}
	f := c.filters
	c.filterSnap.Store(&f)
	c.push = cfg.DeliverSubject != ""
	c.sampleFreq, _ = validate.ParseSampleFreq(cfg.SampleFrequency) // checked by validate.Consumer
	c.setRate(cfg.RateLimit)
	c.setPriority(&cfg)
}

// restoreLastPerSubject reinstalls the last_per_subject picks of a
// consumer loaded at start; those already delivered are skipped as usual.
func (c *consumer) restoreLastPerSubject(picks []uint64) {
	if len(picks) == 0 || c.cfg.DeliverPolicy != api.DeliverLastPerSubject {
		return
	}
	c.lpsAll = picks
	c.lps = slices.Clone(picks)
	c.lpsEnd = picks[len(picks)-1]
}

// meta is what the consumer's meta.inf holds.
func (c *consumer) meta() consumerMeta {
	return consumerMeta{Created: c.created, Config: c.cfg, LastPerSubject: c.lpsAll}
}

func (c *consumer) storeFilters() []string {
	if len(c.filters) == 0 {
		return []string{""}
	}
	return c.filters
}

// matches reports whether a stream subject is one the consumer delivers.
func (c *consumer) matches(subj string) bool {
	if len(c.filters) == 0 {
		return true
	}
	for _, f := range c.filters {
		if subject.Match(f, subj) {
			return true
		}
	}
	return false
}

// withState runs f on the consumer's state. Caller holds mu.
func (c *consumer) withState(f func(st *consumerstate.State)) {
	if c.cs == nil {
		f(&c.mem)
		return
	}
	if err := c.cs.Update(f); err != nil && !errors.Is(err, consumerstate.ErrClosed) {
		c.env.log.Error("consumer state update", "stream", c.s.name, "consumer", c.name, "error", err)
	}
}

// signal wakes the consumer's goroutine; it never blocks.
func (c *consumer) signal() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *consumer) run() {
	defer close(c.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-c.stop:
			timer.Stop()
			return
		case <-c.kick:
		case <-timer.C:
		}
		wake, remove := c.round()
		if remove {
			go c.s.removeConsumer(c, true)
			return
		}
		timer.Stop()
		if wake > 0 {
			d := time.Duration(wake - time.Now().UnixNano())
			timer.Reset(max(d, time.Millisecond))
		}
	}
}

// round delivers what it can and returns when to wake next (0: only on a
// signal) and whether the consumer is inactive and must go.
func (c *consumer) round() (wake int64, remove bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, false
	}
	now := time.Now().UnixNano()
	c.outs, c.ackd, c.replyBuf = c.outs[:0], c.ackd[:0], c.replyBuf[:0]
	soon := func(t int64) {
		if t > 0 && (wake == 0 || t < wake) {
			wake = t
		}
	}
	interest := false
	if c.push {
		interest = c.env.srv.HasInterest(c.cfg.DeliverSubject)
		if interest {
			c.idleFrom = 0
		} else if c.idleFrom == 0 {
			c.idleFrom = now
		}
	} else {
		c.expireRequests(now)
	}
	if c.dueAt > 0 && now >= c.dueAt {
		c.scanDue(now)
	}
	full := false
	paused := c.pausedUntil(now)
	soon(paused) // resume on time
	if (interest || len(c.waiting) > 0) && paused == 0 {
		c.withState(func(st *consumerstate.State) { full = c.deliver(st, now, interest, soon) })
	}
	if full {
		c.signal()
	} else if !c.push {
		c.finishNoWait()
	}
	soon(c.dueAt)
	if c.push {
		c.pushTimers(now, interest, soon)
		if th := int64(c.cfg.InactiveThreshold); th > 0 && c.idleFrom > 0 {
			if now-c.idleFrom >= th {
				remove = true
			}
			soon(c.idleFrom + th)
		}
	} else {
		c.pullTimers(now, soon)
		if len(c.waiting) > 0 {
			c.active = now
		}
		if th := int64(c.cfg.InactiveThreshold); th > 0 {
			if now-c.active >= th {
				remove = true
			}
			soon(c.active + th)
		}
	}
	outs, ackd, maxed, pins := c.outs, c.ackd, c.maxed, c.takePinEvents()
	c.maxed = nil
	c.mu.Unlock()
	c.adviseMaxDeliver(maxed)
	c.advisePins(pins)
	if len(c.replyBuf) > 0 {
		// One string for all the round's reply subjects instead of one each.
		all := string(c.replyBuf)
		for i := range outs {
			if o := &outs[i]; o.replyEnd > 0 {
				o.reply = all[o.replyAt:o.replyEnd]
			}
		}
	}
	for i := range outs {
		o := &outs[i]
		c.env.srv.PublishAs(o.route, o.subj, o.reply, o.hdr, o.data)
		*o = outMsg{}
	}
	if len(outs) > 0 { // a round that sent nothing grew one buffer at most
		c.mu.Lock()
		c.trimBufs()
		c.mu.Unlock()
	}
	if len(ackd) > 0 {
		c.s.retire(c, ackd)
	}
	return wake, remove
}

// trimBufs lets go of the round buffers' capacity past bufsKeep (see
// there), once the round's messages were copied out. Caller holds mu.
func (c *consumer) trimBufs() {
	kept := 0
	for i := range c.bufs {
		m := &c.bufs[i]
		kept += cap(m.Header) + cap(m.Data)
		if kept > bufsKeep {
			*m = store.Msg{}
		}
	}
}

// deliver hands out messages to the push subject or the waiting pull
// requests until there is nothing to send, no one to send it to, or the
// round is full (reported). Caller holds mu; st is the consumer's state.
func (c *consumer) deliver(st *consumerstate.State, now int64, interest bool, soon func(int64)) (full bool) {
	pending, havePending := uint64(0), false
	ackNone := c.cfg.AckPolicy == api.AckNone
	loaded := 0
	for n := 0; ; n++ {
		if n == roundLimit || loaded >= roundBytes {
			return true
		}
		var w *pullRequest
		wi := -1
		route := c.cfg.DeliverSubject
		if c.push {
			if !interest || c.fcStalled() {
				return false
			}
		} else {
			if wi = c.pickRequest(st, now); wi < 0 {
				return false
			}
			w = c.waiting[wi]
			route = w.reply
		}
		if len(c.bufs) <= n {
			c.bufs = append(c.bufs, store.Msg{})
		}
		m := &c.bufs[n]
		sseq, dcount := c.nextRedelivery(st, m)
		if sseq == 0 {
			if !ackNone && c.cfg.MaxAckPending > 0 && c.ackPending(st) >= c.cfg.MaxAckPending {
				return false
			}
			if !c.loadNext(st, m) {
				return false
			}
			if c.cfg.ReplayPolicy == api.ReplayOriginal && c.replay.msgTime > 0 {
				if at := c.replay.sentAt + (m.Time - c.replay.msgTime); at > now {
					soon(at)
					return false
				}
			}
			sseq, dcount = consumerstate.StreamSeq(m.Seq), 1
		}
		// The ack reply is part of the size a pull request's max_bytes
		// counts (as nats-server counts it), so it is made first: the
		// consumer sequence and pending count this delivery will have.
		pend := pending
		switch {
		case dcount == 1 && !havePending:
			pend = c.numPending(st) // still counts this message
			if pend > 0 {
				pend--
			}
		case dcount == 1:
			if pend > 0 {
				pend--
			}
		case !havePending:
			pend = c.numPending(st)
		}
		cseq := st.Delivered.Consumer + 1
		loaded += len(m.Header) + len(m.Data)
		hdr, data := m.Header, m.Data
		if c.cfg.HeadersOnly {
			hdr, data = headersOnly(hdr, len(data)), nil
		}
		if w != nil && w.pinID != "" {
			hdr = pinHeader(hdr, w.pinID)
		}
		at := len(c.replyBuf)
		c.replyBuf = c.appendAckReply(c.replyBuf, dcount, uint64(sseq), uint64(cseq), m.Time, pend)
		size := len(m.Subject) + len(c.replyBuf) - at + len(hdr) + len(data)
		if w != nil && w.maxBytes > 0 && size > w.bytesLeft {
			c.replyBuf = c.replyBuf[:at]
			c.outs = append(c.outs, statusMsg(w.reply, "409 Message Size Exceeds MaxBytes", w.batch, w.bytesLeft))
			c.removeRequest(wi)
			continue
		}
		if w == nil && c.rate != nil {
			// The bucket's own clock (monotonic); the wake-up in unix ns.
			t := c.rate.clock()
			if next := c.rate.take(t, size); next > 0 {
				c.replyBuf = c.replyBuf[:at]
				soon(now + (next - t))
				return false
			}
		}
		// Commit the delivery.
		var err error
		if ackNone {
			_, err = st.DeliverNoAck(sseq)
			if err == nil {
				c.ackd = append(c.ackd, uint64(sseq))
			}
		} else {
			_, err = st.Deliver(sseq, dcount, now)
		}
		if err != nil {
			c.replyBuf = c.replyBuf[:at]
			c.env.log.Error("consumer delivery", "stream", c.s.name, "consumer", c.name, "error", err)
			return false
		}
		pending, havePending = pend, true
		if dcount == 1 {
			if c.cfg.ReplayPolicy == api.ReplayOriginal {
				c.replay.msgTime, c.replay.sentAt = m.Time, now
			}
			if !ackNone && c.cfg.AckPolicy != api.AckFlowControl {
				if due := addSat(now, int64(c.ackWait(1))); c.dueAt == 0 || due < c.dueAt {
					c.dueAt = due
				}
			}
		} else {
			c.rdq = c.rdq[1:]
			delete(c.progress, sseq)
			if due := addSat(now, int64(c.ackWait(dcount))); c.dueAt == 0 || due < c.dueAt {
				c.dueAt = due
			}
		}
		c.lastDlv = time.Unix(0, now)
		c.outs = append(c.outs, outMsg{
			route: route, subj: m.Subject, hdr: hdr, data: data,
			replyAt: int32(at), replyEnd: int32(len(c.replyBuf)),
		})
		if w != nil {
			w.batch--
			w.delivered++
			w.bytesLeft -= size
			if w.hb > 0 {
				w.nextHB = addSat(now, int64(w.hb))
			}
			// Its max_bytes used up exactly, a request is done, as with
			// nats-server (no 409 for the next message).
			if w.batch <= 0 || (w.maxBytes > 0 && w.bytesLeft == 0) {
				c.removeRequest(wi)
			}
		} else {
			c.lastSend = now
			c.flowControl(size, st)
		}
	}
}

// nextRedelivery returns the next message due for redelivery, loaded into
// m, with its new delivery count; 0 when none is due. Messages past
// max_deliver are set aside (exhaust), and vanished ones acknowledged.
func (c *consumer) nextRedelivery(st *consumerstate.State, m *store.Msg) (consumerstate.StreamSeq, uint64) {
	for len(c.rdq) > 0 {
		seq := c.rdq[0]
		if _, ok := st.Pending[seq]; !ok {
			c.rdq = c.rdq[1:]
			continue
		}
		dc := st.DeliveryCount(seq) + 1
		if c.cfg.MaxDeliver > 0 && dc > uint64(c.cfg.MaxDeliver) {
			c.exhaust(seq)
			c.noteMaxDeliver(seq, dc-1)
			c.rdq = c.rdq[1:]
			continue
		}
		if err := c.s.store.Load(uint64(seq), m); err != nil {
			st.Ack(seq)
			c.rdq = c.rdq[1:]
			continue
		}
		return seq, dc
	}
	return 0, 0
}

// loadNext loads the next message the consumer has not delivered yet.
func (c *consumer) loadNext(st *consumerstate.State, m *store.Msg) bool {
	start := uint64(st.Delivered.Stream) + 1
	for len(c.lps) > 0 {
		seq := c.lps[0]
		if seq < start {
			c.lps = c.lps[1:]
			continue
		}
		if err := c.s.store.Load(seq, m); err != nil {
			c.lps = c.lps[1:]
			continue
		}
		return true
	}
	if start <= c.lpsEnd {
		start = c.lpsEnd + 1
	}
	if len(c.filters) <= 1 {
		f := ""
		if len(c.filters) == 1 {
			f = c.filters[0]
		}
		return c.s.store.LoadNext(f, start, m) == nil
	}
	best := uint64(0)
	for _, f := range c.filters {
		if err := c.s.store.LoadNext(f, start, m); err == nil && (best == 0 || m.Seq < best) {
			best = m.Seq
		}
	}
	if best == 0 {
		return false
	}
	if m.Seq == best {
		return true
	}
	return c.s.store.Load(best, m) == nil
}

// numPending counts the stream messages matching the consumer that it has
// not delivered yet. Caller holds mu.
func (c *consumer) numPending(st *consumerstate.State) uint64 {
	start := uint64(st.Delivered.Stream) + 1
	var n uint64
	if len(c.lps) > 0 || start <= c.lpsEnd {
		for _, q := range c.lps {
			if q >= start {
				n++
			}
		}
		start = max(start, c.lpsEnd+1)
	}
	if c.overlap {
		seen := make(map[string]bool)
		for _, f := range c.filters {
			for subj := range c.s.store.SubjectsState(f) {
				if !seen[subj] {
					seen[subj] = true
					n += c.s.store.NumPending(start, subj, false)
				}
			}
		}
		return n
	}
	for _, f := range c.storeFilters() {
		n += c.s.store.NumPending(start, f, false)
	}
	return n
}

// ackWait is how long a delivery with this delivery count waits for its
// ack: the backoff entry for it, else ack_wait.
func (c *consumer) ackWait(dcount uint64) time.Duration {
	if b := c.cfg.BackOff; len(b) > 0 {
		i := int(min(dcount, uint64(len(b)))) - 1
		return b[max(i, 0)]
	}
	if c.cfg.AckWait > 0 {
		return c.cfg.AckWait
	}
	return validate.DefaultAckWait
}

// scanDue collects the pending messages due for redelivery into rdq and
// finds when the next one will be. Caller holds mu.
func (c *consumer) scanDue(now int64) {
	c.dueAt = 0
	if c.cfg.AckPolicy == api.AckNone || c.cfg.AckPolicy == api.AckFlowControl {
		// Flow control acks have no ack wait: nothing is redelivered.
		return
	}
	c.withState(func(st *consumerstate.State) {
		c.rdq = c.rdq[:0]
		for seq, p := range st.Pending {
			due := p.NakAt
			if due == 0 {
				base := p.Timestamp
				if t, ok := c.progress[seq]; ok && t > base {
					base = t
				}
				due = addSat(base, int64(c.ackWait(st.DeliveryCount(seq))))
			}
			if c.exhausted[seq] {
				continue
			}
			if due <= now {
				c.rdq = append(c.rdq, seq)
			} else if c.dueAt == 0 || due < c.dueAt {
				c.dueAt = due
			}
		}
	})
	sortSeqs(c.rdq)
}

// appendAckReply appends $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>.
func (c *consumer) appendAckReply(b []byte, dcount, sseq, cseq uint64, ts int64, pending uint64) []byte {
	b = append(b, c.ackPrefix...)
	b = strconv.AppendUint(b, dcount, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, sseq, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, cseq, 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, '.')
	return strconv.AppendUint(b, pending, 10)
}

// headersOnly returns hdr with a Nats-Msg-Size header added.
func headersOnly(hdr []byte, size int) []byte {
	return natshdr.End(natshdr.AppendInt(natshdr.Reopen(nil, hdr), "Nats-Msg-Size", int64(size)))
}

// info reports the consumer's state as CONSUMER.INFO shows it.
func (c *consumer) info(withServerMeta bool) *api.ConsumerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := c.cfg.Clone()
	if withServerMeta {
		if cfg.Metadata == nil {
			cfg.Metadata = map[string]string{}
		}
		cfg.Metadata[api.MetaServerLevel] = strconv.Itoa(api.Level)
		cfg.Metadata[api.MetaServerVersion] = c.env.srv.Version()
	}
	ci := &api.ConsumerInfo{
		Stream:     c.s.name,
		Name:       c.name,
		Created:    c.created,
		Config:     &cfg,
		NumWaiting: c.liveRequests(time.Now().UnixNano()),
	}
	ci.PriorityGroups = c.priorityInfo()
	c.withState(func(st *consumerstate.State) {
		ci.Delivered = api.SequenceInfo{Consumer: uint64(st.Delivered.Consumer), Stream: uint64(st.Delivered.Stream)}
		ci.AckFloor = api.SequenceInfo{Consumer: uint64(st.AckFloor.Consumer), Stream: uint64(st.AckFloor.Stream)}
		ci.NumAckPending = c.ackPending(st)
		ci.NumRedelivered = len(st.Redelivered) + c.exhaustedRedelivered
		ci.NumPending = c.numPending(st)
	})
	ci.Paused, ci.PauseRemaining = pauseInfo(c.cfg.PauseUntil, time.Now())
	if c.cfg.MaxDeliver == 1 {
		ci.NumRedelivered = 0 // as nats-server: no redeliveries to report
	}
	if !c.lastDlv.IsZero() {
		t := c.lastDlv.UTC()
		ci.Delivered.Last = &t
	}
	if !c.lastAck.IsZero() {
		t := c.lastAck.UTC()
		ci.AckFloor.Last = &t
	}
	if c.push {
		ci.PushBound = c.env.srv.HasInterest(c.cfg.DeliverSubject)
	}
	if c.js.clustered() {
		ci.Cluster = c.js.consumerCluster(c.s)
	}
	ci.TimeStamp = time.Now().UTC()
	return ci
}

// shutdown stops the goroutine; deleted tells waiting pulls the consumer is
// gone (409 Consumer Deleted).
func (c *consumer) shutdown(deleted bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.gone.Store(true)
	waiting := c.waiting
	c.waiting = nil
	c.mu.Unlock()
	close(c.stop)
	if deleted {
		for _, w := range waiting {
			o := statusMsg(w.reply, "409 Consumer Deleted", -1, 0)
			c.env.srv.PublishAs(o.route, o.subj, "", o.hdr, nil)
		}
	}
}

func sortU64(a []uint64) { slices.Sort(a) }

func sortSeqs(a []consumerstate.StreamSeq) { slices.Sort(a) }
