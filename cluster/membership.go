package cluster

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// Changing who holds a replicated stream (more or fewer replicas, a peer
// replaced). The JetStream layer commits the stream's new peers to the meta
// group; every server applies them:
//
//   - a server newly named opens its replica without bootstrapping
//     (OpenStream's join): it holds nothing and waits for the leader;
//   - every member records the wanted peers (SetPeers); the group's leader
//     (manageMembers) adds each new one as a non-voter, waits until it
//     reports having applied what the leader had applied when it was
//     added (the log, or the leader's snapshot of the stream, copied over
//     raft), and only then makes it a voter, so a replica counts towards
//     the quorum once it holds the stream; then it removes the members no
//     longer wanted, one at a time. A leader that is itself no longer
//     wanted hands the leadership to a wanted member, which carries on;
//   - a server no longer named leaves (Leave): it hands over its
//     leadership, waits until the group's configuration no longer counts
//     it, and deletes its replica.
//
// A leader that loses its leadership midway leaves the rest to the next,
// which reads the wanted peers from its own copy of the assignment.

// catchUpTimeout bounds the wait for a new member to catch up before the
// leader retries the change.
const catchUpTimeout = 2 * time.Minute

// SetPeers records the group's wanted members (route addresses); the
// leader brings the group's configuration to them.
func (r *Replica) SetPeers(peers []string) {
	r.mu.Lock()
	r.peers = slices.Sorted(slices.Values(peers))
	r.mu.Unlock()
	r.kickMembers()
}

// kickMembers asks for the configuration to be brought to the wanted
// peers: manageMembers runs, started if it is not running already. It
// runs only while there is something to do, so an idle replica has no
// goroutine waiting for this.
func (r *Replica) kickMembers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.memberKicked = true
	if r.managing {
		return // it looks again before it returns
	}
	r.managing = true
	r.wg.Add(1) // under mu with closed false: close has not begun to Wait
	go r.manageMembers()
}

// manageMembers runs the membership changes while this server leads,
// one kick after another until no kick is left.
func (r *Replica) manageMembers() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		if !r.memberKicked || r.closed {
			r.managing = false
			r.mu.Unlock()
			return
		}
		r.memberKicked = false
		r.mu.Unlock()
		for {
			err := r.reconcile()
			if err == nil {
				break
			}
			r.n.log.Warn("stream group: changing members; retrying", "stream", r.name, "error", err)
			select {
			case <-r.done:
				r.mu.Lock()
				r.managing = false
				r.mu.Unlock()
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// reconcile brings the configuration to the wanted peers, when this
// server leads and has taken the leadership over (readyToLead).
func (r *Replica) reconcile() error {
	r.mu.Lock()
	want, ready := slices.Clone(r.peers), r.token != nil
	r.mu.Unlock()
	if !ready || !r.IsLeader() {
		return nil
	}
	f := r.g.r.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	voters, others := map[string]bool{}, map[string]bool{}
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters[string(s.ID)] = true
		} else {
			others[string(s.ID)] = true
		}
	}
	for _, p := range want {
		if voters[p] {
			continue
		}
		added := time.Now()
		if !others[p] {
			if err := r.g.r.AddNonvoter(raft.ServerID(p), raft.ServerAddress(p), 0, applyTimeout).Error(); err != nil {
				return fmt.Errorf("adding %s: %w", p, err)
			}
		}
		if err := r.waitCaughtUp(p, added); err != nil {
			return err
		}
		if err := r.g.r.AddVoter(raft.ServerID(p), raft.ServerAddress(p), 0, applyTimeout).Error(); err != nil {
			return fmt.Errorf("promoting %s: %w", p, err)
		}
		r.n.log.Info("stream group: replica added", "stream", r.name, "peer", r.n.NameOf(p))
	}
	for id := range others {
		if !slices.Contains(want, id) {
			if err := r.g.r.RemoveServer(raft.ServerID(id), 0, applyTimeout).Error(); err != nil {
				return fmt.Errorf("removing %s: %w", id, err)
			}
		}
	}
	leaving := false
	for id := range voters {
		if slices.Contains(want, id) {
			continue
		}
		if id == r.n.opts.Self {
			leaving = true
			continue
		}
		if err := r.g.r.RemoveServer(raft.ServerID(id), 0, applyTimeout).Error(); err != nil {
			return fmt.Errorf("removing %s: %w", id, err)
		}
		r.n.log.Info("stream group: replica removed", "stream", r.name, "peer", id)
	}
	if leaving {
		// The next leader, a wanted member, removes this one.
		return r.handOver(want)
	}
	return nil
}

// waitCaughtUp waits until peer reports (progress.go) having applied what
// this leader has applied now, in a report sent after since.
func (r *Replica) waitCaughtUp(peer string, since time.Time) error {
	target := r.fsm.Applied()
	deadline := time.Now().Add(catchUpTimeout)
	for {
		r.mu.Lock()
		pr, ok := r.progress[peer]
		r.mu.Unlock()
		if ok && pr.at.After(since) && pr.applied >= target {
			return nil
		}
		if !r.IsLeader() {
			return nil // the next leader carries on
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s has not caught up in %v (applied %d of %d)", peer, catchUpTimeout, pr.applied, target)
		}
		select {
		case <-r.done:
			return ErrClosed
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// handOver transfers the leadership to a connected member of want.
func (r *Replica) handOver(want []string) error {
	for _, p := range want {
		if p == r.n.opts.Self || !r.n.Connected(p) {
			continue
		}
		if err := r.g.r.LeadershipTransferToServer(raft.ServerID(p), raft.ServerAddress(p)).Error(); err == nil {
			return nil
		}
	}
	if !r.IsLeader() {
		return nil
	}
	return errors.New("no wanted member to hand the leadership to")
}

// Leave takes this server out of the group (it is no longer among the
// stream's peers, whose wanted members are want) and deletes its replica:
// it hands its leadership over, waits until the group's configuration no
// longer counts it (at most wait), then removes its data (Remove). Stay,
// called meanwhile because the stream is this server's again, ends the
// leave with the replica kept and running: Leave then returns ErrStayed.
func (r *Replica) Leave(want []string, wait time.Duration) error {
	r.mu.Lock()
	r.leaving, r.stayed, r.stay = true, false, make(chan struct{})
	stay := r.stay
	r.mu.Unlock()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if r.IsLeader() {
			r.SetPeers(want) // reconcile hands over
		} else if !r.inConfiguration() {
			break
		}
		select {
		case <-r.done:
			return r.removeUnlessStayed()
		case <-stay:
			return ErrStayed
		case <-time.After(100 * time.Millisecond):
		}
	}
	return r.removeUnlessStayed()
}

// ErrStayed: a Leave ended because Stay kept the replica.
var ErrStayed = errors.New("cluster: the replica stays: its stream is this server's again")

// removeUnlessStayed removes the replica for Leave, unless Stay came
// first; after it, Stay fails.
func (r *Replica) removeUnlessStayed() error {
	r.mu.Lock()
	if r.stayed {
		r.mu.Unlock()
		return ErrStayed
	}
	r.removing = true
	r.mu.Unlock()
	return r.Remove()
}

// Stay ends a Leave under way with the replica kept (the stream was
// assigned to this server again before its data was removed); the wanted
// peers are the caller's to set again. It reports false when the removal
// has begun (the caller opens the stream anew once it is done) or no
// Leave is under way.
func (r *Replica) Stay() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.leaving || r.removing {
		return false
	}
	r.leaving, r.stayed = false, true
	close(r.stay)
	return true
}

// inConfiguration reports whether this server is still a member of the
// group's latest configuration, as this server knows it.
func (r *Replica) inConfiguration() bool {
	f := r.g.r.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == r.n.opts.Self {
			return true
		}
	}
	return false
}
