package jetstream

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
)

// Atomic batch publish (allow_atomic, nats-server 2.12+). A publisher sends
// the messages of a batch with the same Nats-Batch-Id and the sequence
// numbers 1, 2, ... in Nats-Batch-Sequence; the last one carries
// Nats-Batch-Commit: 1 (it is stored) or eob (it only ends the batch and is
// not stored). Until the commit the messages are staged beside the stream,
// each answered with an empty reply; the commit checks them all as one and
// stores them as one (batch_commit.go), answering with a PubAck that names
// the batch and its count: {"stream":"S","seq":N,"batch":"id","count":C}.
//
// Limits as nats-server's defaults: a batch ID of at most 64 bytes, 1000
// messages per batch, 50 open batches per stream and 1000 in the server, a
// batch abandoned after 10 s without a message. A gap in the sequence, a
// batch not starting at 1 or one unknown to the stream is "incomplete"
// (10176) and is dropped; a dropped open batch is reported by the
// BATCH_ABANDONED advisory (batch_advisory.go).
//
// Staged messages live in memory only: a batch not yet committed when the
// server stops is lost, and its publisher gets no commit PubAck. Because
// they are in memory (nats-server stages file streams' batches on disk),
// the bytes staged are bounded too: 64 MiB per stream and 256 MiB in the
// process (subject, headers and payload). A message that would make its
// own batch larger than the stream's bound drops the batch with 10199
// "too large"; one that finds the stream's or the server's bound used by
// other batches drops its batch with 10210 "too many inflight" (429), the
// publisher's cue to retry later (a commit is not refused for the room
// others take: it frees its batch at once). Either is a BATCH_ABANDONED
// "large". So a client allowed to publish cannot make the server hold more
// than that.

// Header names and limits of atomic batches.
const (
	hdrBatchSeq    = "Nats-Batch-Sequence"
	hdrBatchCommit = "Nats-Batch-Commit"

	maxBatchIDLen           = 64
	maxAtomicBatchSize      = 1000
	maxAtomicBatchPerStream = 50
	maxAtomicBatchTotal     = 1000

	maxStagedBytesPerStream = 64 << 20
	maxStagedBytesTotal     = 256 << 20
)

// atomicBatchesTotal counts the open batches of every stream in the process.
var atomicBatchesTotal atomic.Int64

// atomicStagedBytes counts the bytes staged by the open batches of every
// stream in the process.
var atomicStagedBytes atomic.Int64

// stagedMsg is one message of an open batch; the bytes are copies.
type stagedMsg struct {
	subject string
	hdr     []byte
	data    []byte
}

// atomicBatch is an open batch.
type atomicBatch struct {
	msgs  []stagedMsg
	bytes int64 // staged: subjects, headers and payloads of msgs
	timer *time.Timer
}

// batchSet holds a stream's open batches.
type batchSet struct {
	mu    sync.Mutex
	open  map[string]*atomicBatch
	bytes int64 // staged by the open batches
}

// dropLocked forgets a batch and releases its staged bytes. Caller holds
// mu.
func (bs *batchSet) dropLocked(id string, b *atomicBatch) {
	if bs.open[id] != b {
		return
	}
	b.timer.Stop()
	delete(bs.open, id)
	atomicBatchesTotal.Add(-1)
	bs.bytes -= b.bytes
	atomicStagedBytes.Add(-b.bytes)
	b.bytes = 0
}

// stageBytes accounts n more staged bytes to batch b, within the stream's
// and the process's bounds; it returns the refusal when they do not allow
// it (nothing accounted). A commit message is only held for the commit
// itself, which frees the batch: it must keep its batch within the bound
// but is not refused for the room other batches take. Caller holds mu.
func (bs *batchSet) stageBytes(b *atomicBatch, n int64, commit bool, bounds stagedBounds) *api.ApiError {
	perStream, total := bounds.perStream, bounds.total
	if b.bytes+n > perStream {
		return api.Errorf(api.ErrAtomicPublishTooLargeBatch, "atomic publish batch is too large: %d", perStream)
	}
	if commit {
		return nil
	}
	if bs.bytes+n > perStream {
		return api.NewError(api.ErrAtomicPublishTooManyInflight)
	}
	if atomicStagedBytes.Add(n) > total {
		atomicStagedBytes.Add(-n)
		return api.NewError(api.ErrAtomicPublishTooManyInflight)
	}
	b.bytes += n
	bs.bytes += n
	return nil
}

// dropAll forgets every open batch (the stream is going away).
func (bs *batchSet) dropAll() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for id, b := range bs.open {
		bs.dropLocked(id, b)
	}
}

// handleAtomicBatchMsg takes one message carrying Nats-Batch-Id: it stages
// it, or, for the commit, hands the whole batch to commitBatch.
func (s *stream) handleAtomicBatchMsg(m *server.Msg, reply string, allowAtomic bool) {
	id := string(headerValue(m.Header, hdrBatchID))
	if !allowAtomic {
		s.replyError(reply, api.NewError(api.ErrAtomicPublishDisabled))
		return
	}
	if len(id) > maxBatchIDLen {
		s.replyError(reply, api.NewError(api.ErrAtomicPublishInvalidBatchID))
		return
	}
	bseqV := headerValue(m.Header, hdrBatchSeq)
	bseq, ok := parseSeq(bseqV)
	if len(bseqV) == 0 || !ok {
		s.replyError(reply, api.NewError(api.ErrAtomicPublishMissingSeq))
		return
	}
	commitV := headerValue(m.Header, hdrBatchCommit)
	commit := commitV != nil
	eob := bytes.Equal(commitV, []byte("eob"))
	badCommit := commit && !eob && !bytes.Equal(commitV, []byte("1"))
	size := bseq
	if eob {
		size-- // the end-of-batch message is not stored
	}

	bs := &s.atomic
	bs.mu.Lock()
	b := bs.open[id]
	if b == nil {
		if bseq != 1 {
			bs.mu.Unlock()
			if size > maxAtomicBatchSize {
				s.replyError(reply, api.Errorf(api.ErrAtomicPublishTooLargeBatch, "atomic publish batch is too large: %d", maxAtomicBatchSize))
				return
			}
			s.replyError(reply, api.NewError(api.ErrAtomicPublishIncompleteBatch))
			return
		}
		if len(bs.open)+1 > maxAtomicBatchPerStream {
			bs.mu.Unlock()
			s.replyError(reply, api.NewError(api.ErrAtomicPublishTooManyInflight))
			return
		}
		if atomicBatchesTotal.Add(1) > maxAtomicBatchTotal {
			atomicBatchesTotal.Add(-1)
			bs.mu.Unlock()
			s.replyError(reply, api.NewError(api.ErrAtomicPublishTooManyInflight))
			return
		}
		b = &atomicBatch{}
		b.timer = time.AfterFunc(s.env.cfg.waits.batchIdle, func() {
			bs.mu.Lock()
			open := bs.open[id] == b
			bs.dropLocked(id, b)
			bs.mu.Unlock()
			if open {
				s.adviseBatchAbandoned(id, abandonTimeout)
			}
		})
		if bs.open == nil {
			bs.open = make(map[string]*atomicBatch)
		}
		bs.open[id] = b
	}
	if badCommit {
		bs.dropLocked(id, b)
		bs.mu.Unlock()
		s.replyError(reply, api.NewError(api.ErrAtomicPublishInvalidCommit))
		return
	}
	hdr := m.Header
	if headerValue(hdr, apiserver.HdrRequiredLevel) != nil {
		// As nats-server: a level jetwal lacks drops the batch; the
		// header itself is never stored.
		if apiserver.LevelTooLow(hdr) {
			bs.dropLocked(id, b)
			bs.mu.Unlock()
			s.adviseBatchAbandoned(id, abandonUnsupported)
			s.replyError(reply, api.NewError(api.ErrRequiredApiLevel))
			return
		}
		hdr = withoutHeader(hdr, apiserver.HdrRequiredLevel, 0)
	}
	if !b.timer.Stop() || uint64(len(b.msgs))+1 != bseq || (bseq == 1 && eob) {
		// Timed out meanwhile, a gap, or a batch of nothing.
		bs.dropLocked(id, b)
		bs.mu.Unlock()
		s.adviseBatchAbandoned(id, abandonIncomplete)
		s.replyError(reply, api.NewError(api.ErrAtomicPublishIncompleteBatch))
		return
	}
	if size > maxAtomicBatchSize {
		bs.dropLocked(id, b)
		bs.mu.Unlock()
		s.adviseBatchAbandoned(id, abandonLarge)
		s.replyError(reply, api.Errorf(api.ErrAtomicPublishTooLargeBatch, "atomic publish batch is too large: %d", maxAtomicBatchSize))
		return
	}
	if !eob {
		if aerr := bs.stageBytes(b, int64(len(m.Subject)+len(hdr)+len(m.Data)), commit, s.env.cfg.staged); aerr != nil {
			bs.dropLocked(id, b)
			bs.mu.Unlock()
			s.adviseBatchAbandoned(id, abandonLarge)
			s.replyError(reply, aerr)
			return
		}
		b.msgs = append(b.msgs, stagedMsg{
			subject: m.Subject,
			hdr:     bytes.Clone(hdr),
			data:    bytes.Clone(m.Data),
		})
	}
	if !commit {
		b.timer.Reset(s.env.cfg.waits.batchIdle)
		bs.mu.Unlock()
		if reply != "" {
			s.env.srv.Publish(reply, "", nil, nil) // staged
		}
		return
	}
	bs.dropLocked(id, b)
	bs.mu.Unlock()
	if eob {
		// As nats-server, the last stored message gets the commit header.
		l := &b.msgs[len(b.msgs)-1]
		l.hdr = replaceHeader(l.hdr, hdrBatchCommit, "1")
	}
	s.commitBatch(id, b.msgs, reply)
}

// appendBatchPubAck appends the PubAck of a committed batch.
func appendBatchPubAck(b, prefix []byte, seq uint64, id string, count int) []byte {
	b = append(b, prefix...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"batch":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(count), 10)
	return append(b, '}')
}
