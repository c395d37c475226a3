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
// follower has got, so every member of a stream's group reports, when its
// replica opens and then once a progressInterval, the raft index it has
// applied, on a subject of the
// group; the leader's stream info shows each follower's lag (entries
// applied by the leader and not yet by the follower at its last report)
// and when it last reported.

const progressInterval = time.Second

type progress struct {
	applied uint64
	at      time.Time
}

func (r *Replica) progressSubject() string {
	return "$JWAL.CLUSTER.PROGRESS." + hex.EncodeToString([]byte(r.name))
}

// startProgress subscribes to the group's progress reports.
func (r *Replica) startProgress() error {
	if r.n.srv == nil {
		return nil
	}
	sub, err := r.n.internal().Subscribe(r.progressSubject(), "", func(m *server.Msg) {
		peer, applied, ok := strings.Cut(string(m.Data), " ")
		if !ok {
			return
		}
		n, err := strconv.ParseUint(applied, 10, 64)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.progress[peer] = progress{applied: n, at: time.Now()}
		r.mu.Unlock()
	})
	if err != nil {
		return err
	}
	r.progSub = sub
	return nil
}

// watchFollowers publishes this member's applied index, at once (a
// restarted member is seen back without waiting a progressInterval) and
// then every progressInterval, and records what raft observes of the
// heartbeats to the followers (noteHeartbeat), until the replica closes:
// one goroutine per replica for both.
func (r *Replica) watchFollowers(obs <-chan raft.Observation) {
	defer r.wg.Done()
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	r.reportProgress()
	for {
		select {
		case <-r.done:
			return
		case o := <-obs:
			r.noteHeartbeat(o)
		case <-t.C:
			r.reportProgress()
		}
	}
}

// reportProgress publishes this member's applied index (a leader's only
// when its followers answer reads).
func (r *Replica) reportProgress() {
	// A leader reports too when its followers answer reads
	// (followerreads.go: they compare its report with their log).
	if r.n.srv != nil && (!r.IsLeader() || r.followerReads.Load()) {
		r.n.internal().Publish(r.progressSubject(), "", nil, []byte(r.n.opts.Self+" "+strconv.FormatUint(r.fsm.Applied(), 10)))
	}
}
