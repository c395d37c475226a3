package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/internal/dedupe"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// stream is one JetStream stream: its config, its store and the state the
// publish path keeps beside the store.
//
// Locking, outermost first:
//   - mu serializes publishes into the stream: the header checks, the
//     sequence prediction and the AppendAsync call happen as one step, so
//     the store assigns sequences in the order the checks saw. Management
//     operations that change sequences (purge, delete, update) take it too.
//   - cfgMu guards cfg, xf and subs; readers of the config take it shared.
//   - pmu guards the tables shared with AppendDone callbacks (inflight,
//     dedupe, lastMsgID). Callbacks take only pmu, never mu: memstore runs
//     them inside AppendAsync, i.e. while the publisher holds mu.
type stream struct {
	js       *JetStream // the manager, for what env does not carry (doc.go: the cycle)
	env      *env
	name     string
	dir      string   // "" for memory streams
	files    fileSeal // seals the files in dir: the store's data key (sealed_file.go)
	store    store.StreamStore
	created  time.Time
	ackPre   []byte // {"stream":"<name>","seq":
	onAppend store.AppendDone

	cfgMu sync.RWMutex
	cfg   api.StreamConfig
	xf    streamXforms // cfg's subject_transform and republish, compiled
	subs  []*server.Subscription

	mu       sync.Mutex
	lastSeq  uint64 // last sequence handed out, in flight included
	closed   bool
	counters map[string]counterEntry // counter values by subject (stream_counter.go), a cache
	atomic   batchSet                // open atomic batches (batch.go), with a lock of their own
	fast     fastSet                 // open fast batches (fastbatch.go), with a lock of their own
	sched    schedTable              // message schedules (schedule.go), with a lock of their own

	pmu        sync.Mutex
	inflight   []pendingAppend // in sequence order; popped by onAppended
	inHead     int
	appending  bool     // a publisher is inside AppendAsync
	deferred   []ackJob // completions that fired while appending
	dedup      *dedupe.Table
	ttls       ttlHeap      // per-message expiries (ttl.go), guarded by pmu
	exp        expiryTimer  // fires ttls and marker max_age at their deadlines (ttl.go)
	markerAge  atomic.Int64 // max_age in ns when the stream applies it itself (markers); 0 otherwise
	ttlChanged bool         // since ttl.dat was written
	ttlSaved   time.Time    // when it was
	lastMsgID  string       // Nats-Msg-Id of the last stored message

	resync atomic.Bool // lastSeq may be wrong: recompute when idle

	cons consumerSet // the stream's consumers (consumer_manager.go)

	rep Replica // a replicated stream's member of its group; nil otherwise

	srcs  feeds    // this stream's mirror and sources (stream_source.go)
	watch watchers // feeds of other streams reading this one
}

// pendingAppend is a message handed to AppendAsync whose done has not fired.
type pendingAppend struct {
	seq     uint64 // predicted sequence
	subject string // kept: server.Msg strings stay valid after the handler
	reply   string
	dd      *dedupe.Entry // non-nil when the message carried a Nats-Msg-Id
	rollup  byte          // 0, 's' (subject) or 'a' (all)
	ttl     int64         // ns until the message expires; 0: none (ttl.go)
	rp      *republishMsg // non-nil when the stored message is republished
	val     string        // a counter's new value (stream_counter.go); "" otherwise
	sched   *schedNote    // what the message means to the schedule table (schedule.go)
	fast    *fastMark     // the fast batch the message belongs to (fastbatch_publish.go)
}

func newStream(js *JetStream, cfg api.StreamConfig, created time.Time, dir string, st store.StreamStore) *stream {
	name, _ := json.Marshal(cfg.Name)
	s := &stream{
		js:      js,
		env:     &js.env,
		name:    cfg.Name,
		dir:     dir,
		store:   st,
		created: created,
		cfg:     cfg,
		ackPre:  api.PubAckPrefix(name, js.cfg.Domain),
		dedup:   dedupe.New(int64(cfg.Duplicates)),
	}
	if w, ok := st.(*wal.Store); ok && dir != "" && w.DataKey() != nil {
		// An encrypted stream's own files are sealed with its store's
		// data key (doc.go).
		s.files = fileSeal{dk: w.DataKey(), stream: cfg.Name}
	}
	s.onAppend = s.onAppended
	s.sched.onDue = func() { s.fireSchedules(time.Now()) } // schedule.go
	s.exp.pass = s.expiryPass                              // ttl.go
	s.setMarkerAge(&cfg)
	var err error
	if s.xf, err = newXforms(&cfg); err != nil {
		js.log.Warn("stream subject transform or republish not applied", "stream", s.name, "error", err)
	}
	return s
}

func (s *stream) config() api.StreamConfig {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.Clone()
}

// recover rebuilds the publish-path state from the store after an open: the
// last sequence, the last message's id and the dedupe table of the messages
// inside the duplicate window.
func (s *stream) recover(now time.Time) error {
	st := s.store.State()
	s.lastSeq = st.LastSeq
	if st.Msgs == 0 {
		return nil
	}
	var m store.Msg
	if err := s.store.LoadLast("", &m); err == nil {
		s.lastMsgID = string(headerValue(m.Header, hdrMsgID))
	}
	// The messages to read: those in the duplicate window that dedupe.dat
	// does not cover, and (with per-message TTLs) those ttl.dat does not.
	window := s.cfg.Duplicates
	dedupFrom := s.store.SeqForTime(now.Add(-window))
	if s.dir != "" {
		covered, ok, err := loadDedupe(s.env.cfg.FS, s.dir, s.files, s.dedup)
		switch {
		case err != nil:
			s.env.log.Warn("duplicate window file not used; reading the window from the messages", "stream", s.name, "error", err)
			s.dedup = dedupe.New(int64(window))
		case ok && covered <= st.LastSeq:
			// Only what was appended after the file was written remains.
			dedupFrom = max(dedupFrom, covered+1)
		case ok:
			// The file knows sequences the store does not (damage):
			// trust the messages.
			s.dedup = dedupe.New(int64(window))
		}
	}
	ttlFrom := uint64(math.MaxUint64) // no TTLs to read
	if s.cfg.AllowMsgTTL {
		ttlFrom = st.FirstSeq
		if s.dir != "" {
			covered, ok, err := loadTTLs(s.env.cfg.FS, s.dir, s.files, &s.ttls)
			switch {
			case err != nil:
				s.env.log.Warn("per-message TTL file not used; reading the TTLs from the messages", "stream", s.name, "error", err)
			case ok && covered <= st.LastSeq:
				ttlFrom = max(ttlFrom, covered+1)
			case ok:
				s.ttls = s.ttls[:0] // it knows sequences the store does not: trust the messages
			}
		}
	}
	schedFrom := uint64(math.MaxUint64) // no schedules to rebuild
	if s.cfg.AllowMsgSchedules {
		schedFrom = st.FirstSeq // schedule.go: they live in the messages only
	}
	var sr schedRecovery
	for seq := min(dedupFrom, ttlFrom, schedFrom); seq <= st.LastSeq; seq = m.Seq + 1 {
		err := s.store.LoadNext("", seq, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("stream %s: rebuilding duplicate window at seq %d: %w", s.name, seq, err)
		}
		if id := headerValue(m.Header, hdrMsgID); len(id) > 0 && m.Seq >= dedupFrom {
			s.dedup.Add(string(id), m.Seq, m.Time, false)
		}
		if v := headerValue(m.Header, hdrTTL); len(v) > 0 && m.Seq >= ttlFrom {
			if ttl, err := parseMsgTTL(string(v)); err == nil && ttl > 0 {
				s.ttls.add(m.Time+int64(ttl), m.Seq)
			}
		}
		if m.Seq >= schedFrom {
			s.recoverSchedule(&m, now, &sr)
		}
	}
	s.dedup.Expire(now.UnixNano())
	if err := s.finishScheduleRecovery(&sr); err != nil {
		return fmt.Errorf("stream %s: removing fired schedules: %w", s.name, err)
	}
	return nil
}

// pubConfig is the part of the stream config the publish path reads, taken
// once per message under cfgMu.
type pubConfig struct {
	noAck, sealed, allowRollup, allowTTL bool
	allowCounter, allowAtomic, allowFast bool
	maxSize                              int32
	storage                              api.StorageType
	sched                                schedPolicy
	xf                                   streamXforms
}

func (s *stream) pubConfig() pubConfig {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	cfg := &s.cfg
	return pubConfig{
		noAck: cfg.NoAck, sealed: cfg.Sealed, allowRollup: cfg.AllowRollup, allowTTL: cfg.AllowMsgTTL,
		allowCounter: cfg.AllowMsgCounter, allowAtomic: cfg.AllowAtomicPublish, allowFast: cfg.AllowBatchPublish,
		maxSize: cfg.MaxMsgSize, storage: cfg.Storage,
		sched: schedPolicy{allow: cfg.AllowMsgSchedules, allowTTL: cfg.AllowMsgTTL, subjects: cfg.Subjects},
		xf:    s.xf,
	}
}

// handlePublish is the subscription handler for the stream's subjects. It
// runs on the publisher's goroutine and never waits for the disk: the PubAck
// goes out from onAppended once the store made the message durable.
func (s *stream) handlePublish(m *server.Msg) {
	pc := s.pubConfig()
	if pc.xf.in != nil {
		// The stored subject, as nats-server maps it before anything else.
		if subj := pc.xf.storedSubject(m.Subject); subj != m.Subject {
			tm := *m
			tm.Subject = subj
			m = &tm
		}
	}

	reply := m.Reply // where the PubAck goes; a no_ack stream sends none
	if noAck := pc.noAck; noAck {
		reply = ""
	}
	if ref, valid, fast := parseFastReply(m.Reply); fast {
		s.handleFastBatchMsg(m, reply, ref, valid, &pc) // fastbatch_publish.go
		return
	}
	if aerr := s.checkMsgLimits(m, &pc); aerr != nil {
		s.replyError(reply, aerr)
		return
	}
	var pp pubPlan
	if aerr := s.checkHeaders(m, &pc, &pp); aerr != nil {
		s.replyError(reply, aerr)
		return
	}
	if pp.h.batch {
		s.handleAtomicBatchMsg(pp.m, reply, pc.allowAtomic) // batch.go
		return
	}
	if aerr := s.checkPlan(&pc, &pp); aerr != nil {
		s.replyError(reply, aerr)
		return
	}

	res := s.appendMsg(pp.m, &pp.h, reply, pp.rollup, max(pp.ttl, 0), pc.xf.target(pp.m.Subject), pp.incr)
	// Replies go out only now that no stream lock is held: a reply may be
	// delivered to a subscriber that publishes into this very stream.
	switch {
	case res.aerr != nil:
		s.replyError(reply, res.aerr)
		for _, w := range res.errWaiters {
			s.replyError(w, res.aerr)
		}
	case res.dupSeq > 0 && reply != "":
		s.env.srv.Publish(reply, "", nil, api.AppendPubAck(nil, s.ackPre, res.dupSeq, true))
	}
	s.finishAppend(&res)
}

// checkMsgLimits applies the checks of a message's size and the account's
// storage, before its headers are read.
func (s *stream) checkMsgLimits(m *server.Msg, pc *pubConfig) *api.ApiError {
	switch {
	case pc.sealed:
		return api.NewError(api.ErrStreamSealed)
	case len(m.Header) > maxHdrSz:
		return api.NewError(api.ErrHeaderExceedsMaximum)
	case pc.maxSize >= 0 && len(m.Header)+len(m.Data) > int(pc.maxSize):
		return api.NewError(api.ErrMessageExceedsMaximum)
	}
	return s.js.checkUsage(pc.storage, len(m.Header)+len(m.Data))
}

// pubPlan is what the header checks decide about one message: the message
// to store (a counter or schedule may change it), its headers, TTL, counter
// increment and rollup.
type pubPlan struct {
	m      *server.Msg
	h      pubHeaders
	ttl    time.Duration
	incr   *big.Int
	rollup byte
}

// checkHeaders parses the headers and applies the checks that come before
// a batch header is looked at: counters, TTLs and schedules.
func (s *stream) checkHeaders(m *server.Msg, pc *pubConfig, pp *pubPlan) *api.ApiError {
	pp.m = m
	if len(m.Header) > 0 {
		pp.h = parsePubHeaders(m.Header)
	}
	h := &pp.h
	var aerr *api.ApiError
	if pp.incr, aerr = checkIncr(h, pc.allowCounter, len(m.Data)); aerr != nil {
		return aerr
	}
	if len(h.ttl) > 0 {
		if !pc.allowTTL {
			return api.NewError(api.ErrMessageTTLDisabled)
		}
		ttl, err := parseMsgTTL(string(h.ttl))
		if err != nil {
			return api.NewError(api.ErrMessageTTLInvalid)
		}
		pp.ttl, pp.m = s.markerMinTTL(ttl, pp.m) // stream_markers.go
	}
	if h.hasSched && !h.batch {
		if pp.m, h.sched, aerr = s.checkSchedule(pp.m, h, pc.sched); aerr != nil { // schedule_publish.go
			return aerr
		}
	}
	return nil
}

// checkPlan applies the checks after the batch header: the expected
// stream and the rollup.
func (s *stream) checkPlan(pc *pubConfig, pp *pubPlan) *api.ApiError {
	h := &pp.h
	if len(h.expStream) > 0 && string(h.expStream) != s.name {
		return api.NewError(api.ErrStreamNotMatch)
	}
	if len(h.rollup) > 0 {
		switch {
		case !pc.allowRollup:
			return api.Errorf(api.ErrStreamRollupFailed, "rollup not permitted")
		case string(h.rollup) == rollupSubject:
			pp.rollup = 's'
		case string(h.rollup) == rollupAll:
			pp.rollup = 'a'
		default:
			return api.Errorf(api.ErrStreamRollupFailed, "rollup value invalid: %q", h.rollup)
		}
	}
	return nil
}

// finishAppend sends what completed while an append held the stream's
// locks (the completions memstore runs inline).
func (s *stream) finishAppend(res *pubResult) {
	if res.hasJob {
		s.finish(&res.job)
	}
	for i := range res.jobs {
		s.finish(&res.jobs[i])
	}
	putJobs(res.jobs)
}

// jobBufs recycles the slices of deferred completions (*[]ackJob, length 0).
var jobBufs sync.Pool

func getJobs() []ackJob {
	if p, ok := jobBufs.Get().(*[]ackJob); ok {
		return *p
	}
	return nil
}

func putJobs(js []ackJob) {
	if cap(js) == 0 {
		return
	}
	b := js[:cap(js)] // declared after the check: &b moves it to the heap
	clear(b)
	b = b[:0]
	jobBufs.Put(&b)
}

// pubResult is what appendMsg leaves for handlePublish to send once the
// stream's locks are released.
type pubResult struct {
	aerr       *api.ApiError // error PubAck for the publisher (and errWaiters)
	errWaiters []string
	dupSeq     uint64   // the message is a duplicate of this sequence
	dup        bool     // the message is a duplicate (dupSeq is 0 while the original is in flight)
	jobs       []ackJob // completions that fired during AppendAsync
	// job is the common case of jobs: the one completion (this message's
	// own, from a store that completes inline), kept out of a slice so
	// the publish path does not allocate for it.
	job    ackJob
	hasJob bool
}

// appendMsg runs the checks that need the stream's state and hands the
// message to the store.
func (s *stream) appendMsg(m *server.Msg, h *pubHeaders, reply string, rollup byte, ttl time.Duration, rp republishTarget, incr *big.Int) pubResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendMsgLocked(m, h, reply, rollup, ttl, rp, incr)
}

// appendMsgLocked is appendMsg for a caller holding mu.
func (s *stream) appendMsgLocked(m *server.Msg, h *pubHeaders, reply string, rollup byte, ttl time.Duration, rp republishTarget, incr *big.Int) (res pubResult) {
	if s.closed {
		res.aerr = api.NewError(api.ErrStreamNotFound)
		return res
	}
	if s.resync.Load() {
		s.resyncLocked()
	}
	if aerr := s.checkExpected(m.Subject, h); aerr != nil {
		res.aerr = aerr
		return res
	}

	var val string
	if incr != nil {
		v, aerr := s.counterNext(m.Subject, incr)
		if aerr != nil {
			res.aerr = aerr
			return res
		}
		val = v
		cm := *m
		cm.Data = counterBody(v)
		m = &cm
	}
	p := pendingAppend{seq: s.lastSeq + 1, subject: m.Subject, reply: reply, rollup: rollup, ttl: int64(ttl), val: val, sched: h.sched, fast: h.fast}
	if rp.subject != "" {
		p.rp = s.newRepublish(rp, m.Subject, m.Header, m.Data)
	}
	var msgID string // one copy of the id, shared by the table and lastMsgID
	s.pmu.Lock()
	if len(h.msgID) > 0 {
		now := time.Now().UnixNano()
		s.dedup.Expire(now)
		if e := s.dedup.Lookup(string(h.msgID)); e != nil {
			if e.Pending {
				// Answered when the original's append completes.
				if reply != "" {
					e.Waiters = append(e.Waiters, reply)
				}
			} else {
				res.dupSeq = e.Seq
			}
			res.dup = true
			s.pmu.Unlock()
			return res
		}
		msgID = string(h.msgID)
		p.dd = s.dedup.Add(msgID, p.seq, now, true)
	}
	s.inflight = append(s.inflight, p)
	prevMsgID := s.lastMsgID
	s.lastMsgID = msgID
	// Completions that fire inside AppendAsync (memstore runs them there)
	// are deferred until we have released mu.
	s.appending = true
	s.pmu.Unlock()

	// The store copies subject, header and data before returning. A
	// replicated stream's store holds the message for its next raft entry
	// until the publisher's input chunk is done (server.Msg.Defer), so one
	// entry takes the whole chunk (cluster/batcher.go).
	var err error
	if hs, ok := s.store.(store.HeldAppender); ok {
		if err = hs.AppendAsyncHeld(m.Subject, m.Header, m.Data, s.onAppend); err == nil {
			m.Defer(hs)
		}
	} else {
		err = s.store.AppendAsync(m.Subject, m.Header, m.Data, s.onAppend)
	}

	s.pmu.Lock()
	s.appending = false
	switch len(s.deferred) {
	case 0:
	case 1:
		// Keep the backing array for the next publish: the job is copied.
		res.job, res.hasJob = s.deferred[0], true
		s.deferred[0] = ackJob{}
		s.deferred = s.deferred[:0]
	default:
		res.jobs, s.deferred = s.deferred, getJobs()
	}
	if err != nil {
		// Not stored and done will not fire: take our entry back. It is
		// the newest one, since we still hold mu.
		s.inflight = s.inflight[:len(s.inflight)-1]
		if p.dd != nil {
			s.dedup.Remove(p.dd)
		}
		s.lastMsgID = prevMsgID
		res.errWaiters = takeWaiters(p.dd)
		res.aerr = storeError(err)
	}
	s.pmu.Unlock()
	if err == nil {
		s.lastSeq = p.seq
		if val != "" {
			s.rememberCounter(p.subject, p.seq, val)
		}
	}
	return res
}

// checkExpected applies the Nats-Expected-* headers. Caller holds mu.
func (s *stream) checkExpected(subj string, h *pubHeaders) *api.ApiError {
	if h.hasExpLastSeq {
		want, ok := parseSeq(h.expLastSeq)
		if !ok || want != s.lastSeq {
			return api.Errorf(api.ErrStreamWrongLastSequence, "wrong last sequence: %d", s.lastSeq)
		}
	}
	if h.hasExpSubjSeq {
		want, ok := parseSeq(h.expSubjSeq)
		if !ok {
			return api.Errorf(api.ErrStreamWrongLastSequence, "wrong last sequence: invalid %s", hdrExpectedSubjSeq)
		}
		filter := subj
		if len(h.expSubjSubj) > 0 {
			filter = string(h.expSubjSubj)
		}
		if got := s.lastSeqForSubject(filter); got != want {
			return api.Errorf(api.ErrStreamWrongLastSequence, "wrong last sequence: %d", got)
		}
	}
	if h.hasExpLastMsgI {
		s.pmu.Lock()
		last := s.lastMsgID
		s.pmu.Unlock()
		if string(h.expLastMsgID) != last {
			return api.Errorf(api.ErrStreamWrongLastMsgID, "wrong last msg ID: %s", last)
		}
	}
	return nil
}

// lastSeqForSubject is the sequence of the newest message matching filter,
// counting appends still in flight; 0 if there is none. Caller holds mu.
func (s *stream) lastSeqForSubject(filter string) uint64 {
	// In-flight appends are newer than anything stored.
	s.pmu.Lock()
	for i := len(s.inflight) - 1; i >= s.inHead; i-- {
		if matchFilter(filter, s.inflight[i].subject) {
			seq := s.inflight[i].seq
			s.pmu.Unlock()
			return seq
		}
	}
	s.pmu.Unlock()
	var m store.Msg
	if err := s.store.LoadLast(filter, &m); err == nil {
		return m.Seq
	}
	return 0
}

// ackJob is a completed append waiting for its PubAck.
type ackJob struct {
	p       pendingAppend
	seq     uint64
	ts      int64
	err     error
	waiters []string // duplicates of it that arrived while it was in flight
}

// onAppended is the AppendDone of every append: it fires in sequence order,
// once the message is durable or failed, and sends the PubAck.
func (s *stream) onAppended(seq uint64, ts int64, err error) {
	s.pmu.Lock()
	if s.inHead >= len(s.inflight) {
		s.pmu.Unlock()
		return // not ours (cannot happen); nothing to acknowledge
	}
	j := ackJob{p: s.inflight[s.inHead], seq: seq, ts: ts, err: err}
	s.inflight[s.inHead] = pendingAppend{}
	s.inHead++
	switch {
	case s.inHead == len(s.inflight):
		s.inflight, s.inHead = s.inflight[:0], 0
	case s.inHead >= 1024 && s.inHead*2 >= len(s.inflight):
		// Under steady load the queue never drains; reclaim its head.
		n := copy(s.inflight, s.inflight[s.inHead:])
		clear(s.inflight[n:])
		s.inflight, s.inHead = s.inflight[:n], 0
	}
	if err == nil && !s.notifyConsumers(j.p.subject) { // the message is visible now
		s.storedUnwanted(seq) // interest retention: nobody wants it
	}
	if err == nil {
		s.watch.notify()
	}
	if err == nil && j.p.ttl > 0 {
		s.ttls.add(ts+j.p.ttl, seq)
		s.ttlChanged = true
		s.exp.arm(ts + j.p.ttl)
	}
	if err == nil {
		s.armAgeExpiry(ts)
	}
	if err == nil {
		s.scheduleStored(j.p.subject, seq, j.p.sched) // schedule.go
	}
	if dd := j.p.dd; dd != nil {
		j.waiters = takeWaiters(dd)
		if err != nil {
			s.dedup.Remove(dd)
		} else {
			dd.Seq, dd.TS, dd.Pending = seq, ts, false
		}
	}
	if s.appending {
		// Called from inside AppendAsync, with mu held by the publisher:
		// leave the sending to it. (Under sync always, completions from
		// the store's goroutine that land while a publisher is appending
		// are deferred too, which moves part of the PubAck work off the
		// commit loop; sending those from the commit loop instead was
		// not faster when measured.)
		s.deferred = append(s.deferred, j)
		s.pmu.Unlock()
		return
	}
	s.pmu.Unlock()
	s.finish(&j)
}

// finish sends the PubAck of a completed append (an error one if it failed),
// first applying a rollup.
func (s *stream) finish(j *ackJob) {
	if j.err != nil {
		s.resync.Store(true)
		aerr := storeError(j.err)
		if j.p.fast != nil {
			s.fastFailed(j.p.fast, aerr) // fastbatch_publish.go
		}
		s.replyError(j.p.reply, aerr)
		for _, w := range j.waiters {
			s.replyError(w, aerr)
		}
		return
	}
	if j.seq != j.p.seq {
		s.resync.Store(true)
	}
	if j.p.rp != nil {
		s.republish(j.p.rp, j.p.subject, j.seq, j.ts)
	}
	if j.p.rollup != 0 {
		// Purging older messages touches the store; not on its callback.
		p, waiters := j.p, j.waiters
		p.seq = j.seq
		if !s.js.work.submit(func() { s.applyRollup(p, waiters) }) {
			aerr := api.Errorf(api.ErrStreamRollupFailed, "server shutting down")
			if p.fast != nil {
				s.fastFailed(p.fast, aerr)
			}
			s.replyError(p.reply, aerr)
		}
		return
	}
	if j.p.fast != nil {
		s.ack("", j.seq, j.waiters)
		s.fastStored(j.p.fast, j.seq) // fastbatch_publish.go
		return
	}
	if j.p.val != "" {
		if j.p.reply != "" {
			s.env.srv.Publish(j.p.reply, "", nil, api.AppendCounterPubAck(nil, s.ackPre, j.seq, j.p.val))
		}
		s.ack("", j.seq, j.waiters)
		return
	}
	s.ack(j.p.reply, j.seq, j.waiters)
}

func (s *stream) ack(reply string, seq uint64, dupWaiters []string) {
	if reply != "" {
		// Publish copies the body out before it returns, so the buffer is
		// reused (a stack array would escape through Publish).
		bp := ackBufs.Get().(*[]byte)
		b := api.AppendPubAck((*bp)[:0], s.ackPre, seq, false)
		s.env.srv.Publish(reply, "", nil, b)
		*bp = b
		ackBufs.Put(bp)
	}
	for _, w := range dupWaiters {
		s.env.srv.Publish(w, "", nil, api.AppendPubAck(nil, s.ackPre, seq, true))
	}
}

// ackBufs holds the buffers PubAcks are built in.
var ackBufs = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// applyRollup removes what a Nats-Rollup message replaces, then acks it.
func (s *stream) applyRollup(p pendingAppend, waiters []string) {
	filter := p.subject
	if p.rollup == 'a' {
		filter = ""
	}
	if _, err := s.store.Purge(filter, p.seq, 0); err != nil {
		aerr := api.Errorf(api.ErrStreamRollupFailed, "rollup failed: %v", err)
		if p.fast != nil {
			s.fastFailed(p.fast, aerr)
		}
		s.replyError(p.reply, aerr)
		return
	}
	s.ack(p.reply, p.seq, waiters)
	if p.fast != nil {
		s.fastStored(p.fast, p.seq)
	}
}

func takeWaiters(e *dedupe.Entry) []string {
	if e == nil {
		return nil
	}
	w := e.Waiters
	e.Waiters = nil
	return w
}

// resyncLocked re-reads the last sequence from the store once nothing is in
// flight. Caller holds mu.
func (s *stream) resyncLocked() {
	s.pmu.Lock()
	idle := s.inHead == len(s.inflight)
	s.pmu.Unlock()
	if !idle {
		return
	}
	st := s.store.State()
	s.lastSeq = st.LastSeq
	if st.FirstSeq > 0 && st.FirstSeq-1 > s.lastSeq {
		s.lastSeq = st.FirstSeq - 1
	}
	s.resync.Store(false)
}

// replyError sends an error PubAck to reply, if there is one.
func (s *stream) replyError(reply string, aerr *api.ApiError) {
	if reply == "" {
		return
	}
	b, err := json.Marshal(api.PubAckResponse{Error: aerr, PubAck: &api.PubAck{Stream: s.name, Domain: s.env.cfg.Domain}})
	if err != nil {
		return
	}
	s.env.srv.Publish(reply, "", nil, s.js.api.HidePaths(b))
}

// storeError maps a store error to the PubAck error nats-server sends.
func storeError(err error) *api.ApiError {
	switch {
	case errors.Is(err, store.ErrMaxMsgSize):
		return api.NewError(api.ErrMessageExceedsMaximum)
	case errors.Is(err, store.ErrMaxMsgs):
		return api.Errorf(api.ErrStreamStoreFailed, "maximum messages exceeded")
	case errors.Is(err, store.ErrMaxBytes):
		return api.Errorf(api.ErrStreamStoreFailed, "maximum bytes exceeded")
	case errors.Is(err, store.ErrMaxMsgsPerSubj):
		return api.Errorf(api.ErrStreamStoreFailed, "maximum messages per subject exceeded")
	case errors.Is(err, store.ErrClosed):
		return api.Errorf(api.ErrStreamStoreFailed, "stream closed")
	}
	return api.Errorf(api.ErrStreamStoreFailed, "storing message failed: %v", err)
}

// consumerCount is the number of consumers on the stream.
func (s *stream) consumerCount() int { return s.cons.count() }
