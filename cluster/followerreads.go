package cluster

import (
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Follower reads. A follower may answer reads (direct gets of an
// allow_direct stream) from its own copy while it is Current. What keeps
// its copy close to the leader's is what a hashicorp/raft follower lacks:
// it learns that an entry is committed only with the next append, and an
// idle group sends one only after its CommitTimeout (1 s for stream
// groups, see OpenStream: shorter costs idle CPU for every stream). So a
// follower answering a get sent right after a publish was acknowledged
// would miss the publish most of the time.
//
// With follower reads on (SetFollowerReads), the leader's write queue
// (drain.go) tells flushCommit when it drains: the last write proposed has
// committed and been applied here, and nothing else is queued or in
// flight. The leader then sends each follower what raft sends a
// CommitTimeout later: an append without entries that carries the commit
// index (sendCommit), before the write's callbacks run, so that it leaves
// as the acknowledgement does. It goes through the group's transport but
// not through raft's log: no entry is added, no disk is written on either
// side, and raft's replication of each follower is not involved. Under
// continuous load the queue does not drain and nothing is sent: each
// batch's append carries the commit of the ones before. An idle group
// sends nothing.
//
// The first design appended a raft barrier (a no-op entry) instead, whose
// append would carry the commit: it reached the followers too late, after
// the barrier was synced to disk by the leader and then by the follower
// (a get right after the acknowledgement still missed the write in 30 to
// 45 of 60 tries per server), and it cost every write of a lone publisher
// an entry.
//
// The leader also reports its applied index on the group's progress
// subject (progress.go), which a follower compares with its own log to
// tell whether it is catching up.

// SetFollowerReads turns follower reads of the stream on or off: with
// them on, the leader makes its commits known to the followers as soon as
// its writes stop (flushCommit) and reports its progress to them, so that
// a Current follower answers nearly every read as the leader would.
//
// The goroutine that sends the commits (sendCommits) starts the first time
// follower reads are turned on, so a stream without them costs none.
func (r *Replica) SetFollowerReads(on bool) {
	r.followerReads.Store(on)
	if !on {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.sendingCommits {
		return
	}
	r.sendingCommits = true
	r.wg.Add(1) // close sets closed under mu before it waits
	go r.sendCommits()
}

// flushCommit asks sendCommits to tell the followers the commit index now
// that the leader's writes drained.
func (r *Replica) flushCommit() {
	if !r.followerReads.Load() {
		return
	}
	r.drainedAt.Store(r.g.r.LastIndex())
	r.drainTime.Store(time.Now().UnixNano())
	select {
	case r.commitKick <- struct{}{}:
	default: // a notice is pending: it will carry this commit too
	}
}

// noteProposal records, for a write proposed after the writes drained,
// how long after: the gap sendCommits goes by.
func (r *Replica) noteProposal() {
	if t := r.drainTime.Swap(0); t != 0 {
		r.writeGap.Store(time.Now().UnixNano() - t)
	}
}

// sendCommits sends the followers the leader's commit index each time
// flushCommit asks, until the replica closes. When the last write came
// less than commitDelay after the drain before it, the notice waits
// commitDelay and is dropped if a write came meanwhile (its append
// carries the commit): a publisher that waits for each acknowledgement
// then costs no notice per write, and a follower's read waits (at most
// commitDelay, AwaitApplied) for the commit of what it has received.
// Writes further apart (a KV put, then reads) have their notice at once.
func (r *Replica) sendCommits() {
	defer r.wg.Done()
	for {
		select {
		case <-r.done:
			return
		case <-r.commitKick:
			if time.Duration(r.writeGap.Load()) < commitDelay {
				// Writes follow each other closely (a publisher
				// waiting for each acknowledgement): the next one's
				// append will likely carry the commit.
				select {
				case <-r.done:
					return
				case <-time.After(commitDelay):
				}
				if r.g.r.LastIndex() > r.drainedAt.Load() {
					continue
				}
			}
			r.sendCommit()
		}
	}
}

// commitDelay is how close writes follow each other for the notice to
// wait for the next one (sendCommits).
const commitDelay = 500 * time.Microsecond

// sendCommit sends the other members the leader's commit index, each on
// its own (noticer): a follower that is down or slow to answer (a refused
// dial is retried for 250 ms) must not hold back the notice to the one
// that made the quorum, whose reads wait for it.
func (r *Replica) sendCommit() {
	r.mu.Lock()
	if r.notice == nil {
		r.notice = newNoticer(r.g, r.n.opts.Self, r.done)
	}
	t := r.notice
	r.mu.Unlock()
	t.send()
}

// Current reports whether this member may answer reads from its own copy
// now: it leads; or it is a voting follower that has heard from its
// leader within the group's heartbeat timeout, is not restoring a
// snapshot (nor fetching what it lacks after one, catchup.go), has
// received every entry the leader had applied at its last progress report
// (at most currentReportAge old) and has applied nearly all it knows
// committed. A follower catching up after a restart, a member being added
// and one cut off from its leader are not current.
func (r *Replica) Current() bool {
	switch r.g.r.State() {
	case raft.Leader:
		return true
	case raft.Follower:
	default:
		return false
	}
	_, leader := r.g.r.LeaderWithID()
	if leader == "" || time.Since(r.g.r.LastContact()) > streamTimeoutScale*r.n.opts.HeartbeatTimeout {
		return false
	}
	if r.fsm.Pending() {
		return false
	}
	voter := false
	if f := r.g.r.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			if s.ID == raft.ServerID(r.n.opts.Self) {
				voter = s.Suffrage == raft.Voter
			}
		}
	}
	if !voter {
		return false
	}
	// Committed entries not yet applied: barriers (which no FSM applies)
	// and a few in flight; more is a backlog.
	if commit, applied := r.g.r.CommitIndex(), r.fsm.Applied(); commit > applied+currentApplyBacklog {
		return false
	}
	r.mu.Lock()
	pr, seen := r.progress[string(leader)]
	r.mu.Unlock()
	// The leader had applied pr.applied when it reported: a follower in
	// the replication stream has received it already (entries reach the
	// followers before the leader commits them), one catching up has not.
	return seen && time.Since(pr.at) <= currentReportAge && r.g.r.LastIndex() >= pr.applied
}

const (
	// currentApplyBacklog is how many committed entries a current
	// follower may not have applied yet.
	currentApplyBacklog = 16
	// currentReportAge is how old the leader's last progress report may
	// be for a follower to count as current.
	currentReportAge = 3 * progressInterval
)

// A follower's reads wait for what it has received. A get sent right after
// a publish was acknowledged reaches a follower as early as raft's append
// of the publish does when the other follower made the quorum: this one may
// still be storing the append before it (each is synced to disk before
// raft answers it, and the next is read only then), then has to store the
// publish, learn its commit (sendCommit) and apply it. So a follower
// answers once it has applied every command entry it had received when the
// get came, and everything up to the highest commit index its leader had
// announced (its transport notes both as soon as an append is read),
// waiting at most a given time: a command a new leader's log replaced is
// never applied, and the get waits only once for any such entry (settled:
// up to it, nothing is waited for again).

// readTarget is the raft index a read waits for (AwaitApplied).
func (r *Replica) readTarget() uint64 {
	command, commit := r.g.trans.Received()
	return max(command, commit)
}

// Applying reports whether this member has received entries it has not
// applied yet: a read should AwaitApplied first.
func (r *Replica) Applying() bool {
	target := r.readTarget()
	return target > r.fsm.Applied() && target > r.settled.Load()
}

// AwaitApplied waits until this member has applied what it had received
// when called (see above), at most max.
func (r *Replica) AwaitApplied(max time.Duration) {
	target := r.readTarget()
	deadline := time.Now().Add(max)
	for r.fsm.Applied() < target && target > r.settled.Load() {
		if r.g.r.AppliedIndex() >= target {
			// Handed to the FSM: done unless the entry is a command
			// (a leader's no-op, a barrier, a configuration are not).
			var e raft.Log
			if r.g.log.GetLog(target, &e) != nil || e.Type != raft.LogCommand {
				raiseTo(&r.settled, target) // nothing to wait for up to it
				return
			}
		}
		if time.Now().After(deadline) {
			raiseTo(&r.settled, target)
			return
		}
		select {
		case <-r.done:
			return
		case <-time.After(applyPoll):
		}
	}
}

// raiseTo sets v to n unless it is already at least n.
func raiseTo(v *atomic.Uint64, n uint64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// applyPoll is how often AwaitApplied looks at the FSM's progress.
const applyPoll = 200 * time.Microsecond
