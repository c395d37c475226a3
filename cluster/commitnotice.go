package cluster

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Commit notices. A hashicorp/raft follower learns that an entry is
// committed only with the leader's next append, which an idle group sends
// a CommitTimeout later. Where followers must apply a write soon after
// the leader did (a stream's follower reads, followerreads.go; every meta
// entry, which each server acts on: a new stream's assignment starts its
// replicas), the leader sends them the commit index itself, once its
// write has applied: an append without entries (sendCommit). That lets
// the groups keep a CommitTimeout long enough to cost an idle group
// little (the meta group's was 5 ms: ~260 empty appends a second from
// its leader, most of a quiet server's CPU).

// A commit notice refused by a follower whose log did not reach the
// commit yet is sent again commitTries times, commitRetry apart.
const (
	commitTries = 10
	commitRetry = time.Millisecond
)

// commitNotice is one notice for one follower.
type commitNotice struct {
	id     raft.ServerID
	addr   raft.ServerAddress
	req    *raft.AppendEntriesRequest
	commit uint64
}

// notices returns the notices of the leader's commit index for every
// other member, none if this member does not lead or has committed
// nothing in its term. self is this server's ID (and address).
//
// Each notice is an append without entries that carries the leader's
// commit index: the append raft itself sends a CommitTimeout after the
// last one. Its previous entry is the committed entry itself (index and
// term), so a follower takes the commit only when its log holds that
// entry, and then its log matches the leader's up to there (raft's log
// matching: entries of one index and term are the same, as are the logs
// before them); a follower without it yet refuses and is asked again
// (deliver), and one still without it learns the commit from raft's next
// append. The answers are dropped: raft's replication of each follower
// knows nothing of these appends, and needs nothing from them. Each costs
// the follower no disk write.
func (g *group) notices(self string) []commitNotice {
	term := g.r.CurrentTerm()
	if g.r.State() != raft.Leader {
		return nil
	}
	// The committed entry's term is the leader's: every entry from the
	// one that opened its term on is, and its commit index is past that
	// one once it has committed anything. Right after an election it may
	// not be; the claim is then false, and as no log holds an entry of
	// this term at that index, every follower refuses it.
	// With the term the same before and after, this server led in that
	// term when it read the commit index: only it makes entries of that
	// term, so a follower holding one at that index holds its entry.
	commit := g.r.CommitIndex()
	if commit == 0 || g.r.CurrentTerm() != term {
		return nil
	}
	f := g.r.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	id := raft.ServerID(self)
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(id), Addr: g.trans.EncodePeer(id, raft.ServerAddress(self))}
	var out []commitNotice
	for _, s := range f.Configuration().Servers {
		if s.ID == id {
			continue
		}
		out = append(out, commitNotice{id: s.ID, addr: s.Address, commit: commit, req: &raft.AppendEntriesRequest{
			RPCHeader: hdr, Term: term, PrevLogEntry: commit, PrevLogTerm: term, LeaderCommitIndex: commit}})
	}
	return out
}

// deliver sends n, again while the follower is still storing the entry
// (its log is shorter), a little later, commitTries times at most, until
// done closes.
func (g *group) deliver(n commitNotice, done <-chan struct{}) {
	for try := 0; try < commitTries; try++ {
		var resp raft.AppendEntriesResponse
		err := g.trans.AppendEntries(n.id, n.addr, n.req, &resp)
		if err != nil || resp.Success || resp.Term > n.req.Term || resp.LastLog >= n.commit {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(commitRetry):
		}
	}
}

// noticer sends commit notices without waiting for them: each follower's
// go out one after the other on a goroutine of its own, started when one
// is due and gone when none is, so that a follower that is down or slow
// delays nobody else's; a notice due while the last one to the same
// follower is still out replaces any older one waiting.
type noticer struct {
	g    *group
	self string
	done <-chan struct{}

	mu      sync.Mutex
	next    map[raft.ServerID]commitNotice // due, not sent yet
	sending map[raft.ServerID]bool         // a goroutine sends to it
	wg      sync.WaitGroup
}

func newNoticer(g *group, self string, done <-chan struct{}) *noticer {
	return &noticer{g: g, self: self, done: done, next: map[raft.ServerID]commitNotice{}, sending: map[raft.ServerID]bool{}}
}

// send makes the leader's commit index due to every follower.
func (t *noticer) send() {
	ns := t.g.notices(t.self)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range ns {
		t.next[n.id] = n
		if !t.sending[n.id] {
			t.sending[n.id] = true
			t.wg.Add(1)
			go t.run(n.id)
		}
	}
}

// wait waits for the notices out; close done and the group's transport
// first.
func (t *noticer) wait() { t.wg.Wait() }

func (t *noticer) run(id raft.ServerID) {
	defer t.wg.Done()
	for {
		t.mu.Lock()
		n, ok := t.next[id]
		delete(t.next, id)
		if !ok {
			delete(t.sending, id)
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
		t.g.deliver(n, t.done)
	}
}
