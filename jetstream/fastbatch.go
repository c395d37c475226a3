package jetstream

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Fast batch publish ("fast ingest": allow_batched, nats-server 2.14, API
// level 4). Unlike an atomic batch, a fast batch is not staged: each of its
// messages is checked and stored as it arrives, like a plain publish, and
// the batch only carries the acknowledgements. The batch is described by
// the reply subject, not by headers:
//
//	<prefix>.<id>.<flow>.<gap>.<seq>.<op>.$FI
//
// id names the batch (at most 64 bytes), flow is how many messages the
// client lets go by between two flow acks (1..65535; 0 or less means 10),
// gap is "fail" or "ok", seq the message's place in the batch (1, 2, ...)
// and op one of 0 start (seq 1), 1 append (seq > 1), 2 commit (the message
// is stored and ends the batch), 3 end of batch (ends it, not stored) and
// 4 ping (not stored; asks for the flow ack again). A reply subject ending
// in .$FI that does not parse is refused with 10206.
//
// The server answers on the message's reply subject with JSON messages of
// three types: {"type":"ack","seq":S,"msgs":N} says the batch's messages up
// to S are stored and the next ack comes N messages later (the first
// message gets one with seq 0 that only gives N); {"type":"gap",
// "last_seq":E,"seq":S} says messages from E up to S were never seen;
// {"type":"err","seq":S,"error":{...}} says message S was refused. The end
// of the batch is a PubAck naming the batch and its count:
// {"stream":"S","seq":N,"batch":"id","count":C}, sent once every message
// up to C is stored. With gap "fail", a gap or a refused message ends the
// batch there (the PubAck counts what was stored before it); with gap
// "ok" the batch goes on. A refused first message is answered with its
// plain error PubAck and ends the batch.
//
// Bounds, as nats-server's defaults: 1000 open batches per stream and
// 50,000 in the process (10211 past either), a batch abandoned after 10 s
// without a message (waits.batchIdle, the atomic batches' wait). A batch
// holds no messages, only a few counters, so nothing else needs bounding.
// The ack interval starts at the client's flow (at most 500) when the
// batch is the stream's only one, at 1 otherwise, and moves towards
// 500/(open batches) by doubling or halving at each ack, as nats-server's
// does. A message whose store append fails after it was accepted (the
// disk) is reported with an "err" message and drops the batch.
//
// As in nats-server, batches live in memory only (a restart forgets them:
// the next message is of an unknown batch, 10208), and no advisory is sent
// for a batch abandoned or dropped. jetwal stores a message after its
// predecessor's append was handed to the store, not after it completed: a
// batch ended (commit, gap, error) while its last messages are still being
// stored answers once they are, on the ending message's reply subject,
// and ignores messages arriving meanwhile, as nats-server does while a
// replicated batch commits. On a replicated stream the batch lives on the
// stream's leader, which takes its publishes; a new leader does not know
// it (the client gets 10208 and starts again).

// The reply subject suffix and the limits of fast batches.
const (
	fastSuffix            = ".$FI"
	maxFastBatchPerStream = 1000
	maxFastBatchTotal     = 50_000
	maxFastAckMsgs        = 500
	defaultFastFlow       = 10
)

// fastBatchesTotal counts the open fast batches of every stream in the
// process.
var fastBatchesTotal atomic.Int64

// fastOp is the operation a fast batch message's reply subject names.
type fastOp uint8

const (
	fastStart fastOp = iota
	fastAppend
	fastCommit
	fastCommitEOB
	fastPing
)

// fastRef is what a fast batch message's reply subject says.
type fastRef struct {
	id    string
	seq   uint64
	flow  uint16
	gapOK bool
	op    fastOp
}

func (r *fastRef) commits() bool { return r.op == fastCommit || r.op == fastCommitEOB }

// parseFastReply reads a fast batch reply subject. fast reports the .$FI
// suffix; valid whether the rest follows the pattern.
func parseFastReply(reply string) (ref fastRef, valid, fast bool) {
	if len(reply) <= len(fastSuffix) || !strings.HasSuffix(reply, fastSuffix) {
		return ref, false, false
	}
	rest := reply[:len(reply)-len(fastSuffix)]
	var tok [5]string // op, seq, gap, flow, id: read from the right
	for i := range tok {
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 {
			return ref, false, true
		}
		tok[i], rest = rest[dot+1:], rest[:dot]
	}
	op, err := strconv.ParseInt(tok[0], 10, 64)
	if err != nil || op < int64(fastStart) || op > int64(fastPing) {
		return ref, false, true
	}
	ref.op = fastOp(op)
	ref.seq, err = strconv.ParseUint(tok[1], 10, 64)
	switch {
	case err != nil || ref.seq == 0 || ref.seq == math.MaxUint64:
		return ref, false, true
	case ref.seq == 1 && ref.op == fastCommitEOB,
		ref.op == fastStart && ref.seq != 1,
		ref.op == fastAppend && ref.seq == 1:
		return ref, false, true
	}
	switch tok[2] {
	case "ok":
		ref.gapOK = true
	case "fail":
	default:
		return ref, false, true
	}
	flow, err := strconv.ParseInt(tok[3], 10, 64)
	switch {
	case err != nil || flow <= 0:
		ref.flow = defaultFastFlow
	case flow > math.MaxUint16:
		ref.flow = math.MaxUint16
	default:
		ref.flow = uint16(flow)
	}
	ref.id = tok[4]
	return ref, true, true
}

// fastBatch is an open fast batch: where it stands, nothing more.
type fastBatch struct {
	timer   *time.Timer // abandons the batch when idle; nil once dropped
	lseq    uint64      // highest batch sequence seen
	sseq    uint64      // stream sequence of the last message stored
	pseq    uint64      // highest batch sequence stored (<= lseq)
	fseq    uint64      // batch sequence of the last flow ack (<= pseq)
	pending uint32      // accepted messages whose append has not completed
	ackMsgs uint16      // current ack interval
	maxAcks uint16      // the client's flow: the ack interval's ceiling
	reply   string      // reply subject of the last message stored
	ender   string      // reply subject of the message that ended the batch
	gapOK   bool
	commit  bool // ending: the PubAck goes out once pseq reaches lseq
}

// fastSet holds a stream's open fast batches.
//
// Locking: mu guards open and every batch in it. What a step sends goes
// out after mu is released (a reply may reach a handler that publishes
// into this stream), but under sendMu, taken before mu is released, so
// replies leave in the order the steps happened: a PubAck sent when a
// message is stored never overtakes the report of an earlier step.
// Order: mu, then sendMu; nothing holding sendMu takes mu.
type fastSet struct {
	mu     sync.Mutex
	open   map[string]*fastBatch
	sendMu sync.Mutex
}

// fastOut collects the messages a fast batch step sends, so they go out
// once the batch lock is released.
type fastOut struct {
	subj []string
	body [][]byte
}

func (o *fastOut) add(subj string, body []byte) {
	if subj == "" {
		return
	}
	o.subj = append(o.subj, subj)
	o.body = append(o.body, body)
}

// fastUnlockSend releases s.fast.mu and sends what o holds, in order
// with the other steps (fastSet's locking).
func (s *stream) fastUnlockSend(o *fastOut) {
	fs := &s.fast
	if len(o.subj) == 0 {
		fs.mu.Unlock()
		return
	}
	fs.sendMu.Lock()
	fs.mu.Unlock()
	for i, subj := range o.subj {
		s.env.srv.Publish(subj, "", nil, o.body[i])
	}
	fs.sendMu.Unlock()
}

// openLocked starts batch id, within the stream's and the process's
// bounds. Caller holds mu.
func (fs *fastSet) openLocked(id string, ref *fastRef, idle time.Duration, bounds stagedBounds) (*fastBatch, *api.ApiError) {
	if len(fs.open)+1 > bounds.fastPerStream {
		return nil, api.NewError(api.ErrBatchPublishTooManyInflight)
	}
	if fastBatchesTotal.Add(1) > int64(bounds.fastTotal) {
		fastBatchesTotal.Add(-1)
		return nil, api.NewError(api.ErrBatchPublishTooManyInflight)
	}
	b := &fastBatch{gapOK: ref.gapOK, maxAcks: ref.flow}
	if fs.open == nil {
		fs.open = make(map[string]*fastBatch)
	}
	fs.open[id] = b
	b.ackMsgs = min(maxFastAckMsgs, b.maxAcks)
	if len(fs.open) > 1 {
		b.ackMsgs = 1 // others share the stream: start slow
	}
	b.timer = time.AfterFunc(idle, func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		fs.dropLocked(id, b)
	})
	return b, nil
}

// dropLocked forgets batch b. Caller holds mu.
func (fs *fastSet) dropLocked(id string, b *fastBatch) {
	if b.timer == nil {
		return
	}
	b.timer.Stop()
	b.timer = nil
	if fs.open[id] == b {
		delete(fs.open, id)
	}
	fastBatchesTotal.Add(-1)
}

// dropAll forgets every open batch (the stream is going away, or no
// longer allows fast batches).
func (fs *fastSet) dropAll() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for id, b := range fs.open {
		fs.dropLocked(id, b)
	}
}

// count is the number of open batches.
func (fs *fastSet) count() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.open)
}

// touch restarts b's idle timer; false if it already fired.
func (b *fastBatch) touch(idle time.Duration) bool {
	if b.commit {
		return true
	}
	if b.timer == nil {
		return false
	}
	return b.timer.Reset(idle)
}

// flowAck appends the flow ack for batch sequence seq.
func (b *fastBatch) flowAck(o *fastOut, reply string, seq uint64) {
	if reply == "" {
		return
	}
	buf := append([]byte(`{"type":"ack","seq":`), strconv.FormatUint(seq, 10)...)
	buf = append(buf, `,"msgs":`...)
	buf = strconv.AppendUint(buf, uint64(b.ackMsgs), 10)
	o.add(reply, append(buf, '}'))
}

// checkFlow sends a flow ack when pseq has moved an ack interval past the
// last one, adjusting the interval to the stream's open batches first; it
// reports whether it sent one. Caller holds the set's mu.
func (b *fastBatch) checkFlow(o *fastOut, reply string, open int) bool {
	am := uint64(b.ackMsgs)
	if b.pseq < b.fseq+am {
		return false
	}
	b.fseq += (b.pseq - b.fseq) / am * am
	target := uint16(max(1, maxFastAckMsgs/max(open, 1)))
	target = min(target, b.maxAcks)
	switch {
	case b.ackMsgs < target:
		b.ackMsgs = min(b.ackMsgs*2, target)
	case b.ackMsgs > target:
		b.ackMsgs = max(b.ackMsgs/2, target)
	}
	b.flowAck(o, reply, b.fseq)
	return true
}

// gapMsg appends a gap report: messages from last up to seq never came.
func gapMsg(o *fastOut, reply string, last, seq uint64) {
	buf := append([]byte(`{"type":"gap","last_seq":`), strconv.FormatUint(last, 10)...)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendUint(buf, seq, 10)
	o.add(reply, append(buf, '}'))
}

// errMsg appends the report of message seq refused with aerr.
func (s *stream) fastErrMsg(o *fastOut, reply string, seq uint64, aerr *api.ApiError) {
	body, err := json.Marshal(struct {
		Type  string        `json:"type"`
		Seq   uint64        `json:"seq"`
		Error *api.ApiError `json:"error"`
	}{"err", seq, aerr})
	if err == nil {
		o.add(reply, s.js.api.HidePaths(body))
	}
}

// commitLocked ends batch b. When every message up to lseq is stored it
// sends the PubAck at once and drops b; otherwise the PubAck goes out when
// the last one is (fastStored). It reports whether b is finished. Caller
// holds mu.
func (s *stream) fastCommitLocked(o *fastOut, id string, b *fastBatch, reply string) bool {
	if b.timer == nil || (!b.commit && !b.timer.Stop()) {
		return true // abandoned meanwhile
	}
	b.commit = true
	if b.lseq != b.pseq {
		// The PubAck goes to the ending message once the rest is stored:
		// there its publisher waits for it (nats-server's single server
		// stores each message before it reads the next, so it always
		// answers there).
		b.ender = reply
		return false
	}
	s.fast.dropLocked(id, b)
	if reply != "" {
		o.add(reply, appendBatchPubAck(nil, s.ackPre, b.sseq, id, int(b.lseq)))
	}
	return true
}
