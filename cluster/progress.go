package cluster

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/server"
)

// Follower progress. hashicorp/raft does not tell a leader how far each
// follower has got, so every member of a stream's group reports the raft
// index it has applied: once when its replica opens (a restarted member is
// seen back at once), and then once a progressInterval with every other
// replica of its server, in one message per server
// (progressSubject: a first line naming the server, then a line
// "<hex of the stream name> <applied>" per replica), so that a server
// with many streams sends one message a second, not one per stream. The
// leader's stream info shows each follower's lag (entries applied by the
// leader and not yet by the follower at its last report) and when it last
// reported. The subject is in the server-internal account, out of every
// client's reach (node.internal).

const (
	progressInterval = time.Second
	progressSubject  = "$JWAL.CLUSTER.PROGRESS"
	// progressChunk bounds one report message's size: a server with more
	// replicas than fit sends several.
	progressChunk = 32 << 10
)

type progress struct {
	applied uint64
	at      time.Time
}

// startProgress subscribes to the servers' progress reports and starts
// this server's, every progressInterval until stop closes.
func (n *Node) startProgress(stop <-chan struct{}) error {
	if n.srv == nil {
		return nil
	}
	sub, err := n.internal().Subscribe(progressSubject, "", n.takeProgress)
	if err != nil {
		return err
	}
	n.progWG.Add(1)
	go func() {
		defer n.progWG.Done()
		defer sub.Unsubscribe()
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				n.reportProgress()
			}
		}
	}()
	return nil
}

// takeProgress records a server's report in each replica it names.
func (n *Node) takeProgress(m *server.Msg) {
	peer, lines, ok := strings.Cut(string(m.Data), "\n")
	if !ok || peer == "" {
		return
	}
	now := time.Now()
	for line := range strings.Lines(lines) {
		name, applied, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if !ok {
			continue
		}
		raw, err := hex.DecodeString(name)
		if err != nil {
			continue
		}
		idx, err := strconv.ParseUint(applied, 10, 64)
		if err != nil {
			continue
		}
		n.mu.Lock()
		r := n.replicas[string(raw)]
		n.mu.Unlock()
		if r == nil {
			continue
		}
		r.mu.Lock()
		r.progress[peer] = progress{applied: idx, at: now}
		r.mu.Unlock()
	}
}

// reportProgress publishes the applied index of every replica of this
// server that reports (Replica.reports).
func (n *Node) reportProgress() {
	n.mu.Lock()
	reps := make([]*Replica, 0, len(n.replicas))
	for _, r := range n.replicas {
		reps = append(reps, r)
	}
	n.mu.Unlock()
	head := n.opts.Self + "\n"
	msg := []byte(head)
	for _, r := range reps {
		if !r.reports() {
			continue
		}
		msg = r.appendProgress(msg)
		if len(msg) >= progressChunk {
			n.internal().Publish(progressSubject, "", nil, msg)
			msg = append(msg[:0:0], head...)
		}
	}
	if len(msg) > len(head) {
		n.internal().Publish(progressSubject, "", nil, msg)
	}
}

// reports: a follower always reports its progress; a leader only when its
// followers answer reads (followerreads.go: they compare its report with
// their log).
func (r *Replica) reports() bool { return !r.IsLeader() || r.followerReads.Load() }

// appendProgress appends the replica's line of a progress report.
func (r *Replica) appendProgress(b []byte) []byte {
	b = hex.AppendEncode(b, []byte(r.name))
	b = append(b, ' ')
	b = strconv.AppendUint(b, r.fsm.Applied(), 10)
	return append(b, '\n')
}

// beatObsQueue is how many heartbeat observations wait for
// watchHeartbeats; raft drops one that finds the queue full (the
// observers do not block), which Followers tolerates (a follower's
// progress reports say it is back).
const beatObsQueue = 1024

// watchHeartbeats records, until stop closes, what raft observes of every
// stream group's heartbeats to its followers (Replica.noteHeartbeat).
func (n *Node) watchHeartbeats(stop <-chan struct{}) {
	defer n.progWG.Done()
	for {
		select {
		case <-stop:
			return
		case o := <-n.beatObs:
			n.mu.Lock()
			r := n.observed[o.Raft]
			n.mu.Unlock()
			if r != nil {
				r.noteHeartbeat(o)
			}
		}
	}
}

// observeHeartbeats has watchHeartbeats record r's heartbeat observations.
func (r *Replica) observeHeartbeats() {
	r.n.mu.Lock()
	r.n.observed[r.g.r] = r
	r.n.mu.Unlock()
	r.obs = raft.NewObserver(r.n.beatObs, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation:
			return true
		}
		return false
	})
	r.g.r.RegisterObserver(r.obs)
}

// unobserveHeartbeats undoes observeHeartbeats.
func (r *Replica) unobserveHeartbeats() {
	r.g.r.DeregisterObserver(r.obs)
	r.n.mu.Lock()
	delete(r.n.observed, r.g.r)
	r.n.mu.Unlock()
}

// reportProgress publishes this member's applied index alone.
func (r *Replica) reportProgress() {
	if r.n.srv != nil && r.reports() {
		r.n.internal().Publish(progressSubject, "", nil, r.appendProgress([]byte(r.n.opts.Self+"\n")))
	}
}
