package wal

import (
	"runtime"

	"github.com/jetwal/jetwal/segment"
)

// pruner removes messages in bulk: a compaction, a purge, a truncation, a
// tombstone replayed at recovery, evictions of the oldest messages. Each
// removal updates the sequence index and the accounting at once, as
// removeLocked does; the subject index is updated once per subject when
// the batch ends (finishLocked, index.Subjects.RemoveSpan), instead of
// once per message, each of which looked for the subject's new first
// message from the one removed (most of a large compaction's time).
//
// Until finishLocked the subject index still counts the removed messages:
// nothing may read or change it meanwhile. A batch must remove, for each
// subject it touches, every live message of that subject between the
// lowest and the highest it removed (RemoveSpan's condition). The oldest
// messages, all messages in a range, all matching messages below a
// sequence: each bulk removal here is one of these.
type pruner struct {
	s    *Store
	subj map[string]*prunedSubj
	last *prunedSubj // the subject removed last: streams repeat subjects
}

type prunedSubj struct {
	name      string
	n, lo, hi uint64
}

func (s *Store) newPruner() *pruner { return &pruner{s: s} }

// removeLocked removes seq if it is live and reports whether it was.
func (p *pruner) removeLocked(seq uint64) bool {
	r, live, readable := p.s.dropLocked(seq)
	if !live || !readable {
		return live
	}
	name := r.Subject
	if r.Flags&segment.FlagErased != 0 {
		// The subject index is as it was before the batch, so it still
		// knows whose seq this was.
		name = []byte(p.s.idx.Subj.SubjectOf(seq))
	}
	sp := p.last
	if sp == nil || string(name) != sp.name {
		if sp = p.subj[string(name)]; sp == nil { // string(b) in a lookup does not allocate
			sp = p.add(string(name), seq)
		}
	}
	sp.n++
	sp.hi = seq
	p.last = sp
	return true
}

func (p *pruner) add(name string, seq uint64) *prunedSubj {
	if p.subj == nil {
		p.subj = make(map[string]*prunedSubj)
	}
	sp := &prunedSubj{name: name, lo: seq}
	p.subj[name] = sp
	return sp
}

// finishLocked updates the subject index for the batch.
func (p *pruner) finishLocked() {
	for name, sp := range p.subj {
		p.s.idx.Subj.RemoveSpan(name, sp.n, sp.lo, sp.hi, p.s.idx.Seqs.Live)
	}
	clear(p.subj)
	p.last = nil
}

// pruneChunk is how many messages a compaction or purge removes per hold of
// the store's lock (about 11 ms at the 170 ns a removal takes on the 2-core
// VM): a purge of millions of messages
// would otherwise stop every append and read of the stream for seconds.
const pruneChunk = 1 << 16

// yieldLocked lets appends and reads in between chunks of a long removal:
// it completes the batch so far (the subject index is whole again), then
// releases the lock and takes it back. Readers meanwhile see the removal
// partly done (before it they saw none of it, after it all of it); a crash
// meanwhile keeps at most what a checkpoint took of it, never a message
// half removed. It returns an error if the store closed or failed
// meanwhile.
func (p *pruner) yieldLocked() error {
	p.finishLocked()
	p.s.mu.Unlock()
	if p.s.testYield != nil {
		p.s.testYield()
	}
	runtime.Gosched()
	p.s.mu.Lock()
	return p.s.checkOpen()
}
