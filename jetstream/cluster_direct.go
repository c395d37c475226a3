package jetstream

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
)

// Direct gets of replicated streams, answered by every current replica,
// as in nats-server. Each member of an allow_direct stream's group that
// answers (its leader, serving the stream; a follower while
// Replica.Current) subscribes $JS.API.DIRECT.GET.<stream> and
// $JS.API.DIRECT.GET.<stream>.> in the queue group "_sys_", nats-server's,
// so each request is answered once, by one member the servers' routing
// picks (at random, weighted by members); the $JS.API.> handler leaves these requests to the
// queue group (answers). The subjects and the account are the stream's,
// whoever answers. A follower reads through a read-only stream object over
// its replica's store (never subscribed to the stream's subjects, never
// written); once it leads, the same subscription reads through the stream
// it serves.
//
// A follower is current (cluster/followerreads.go) while it hears from its
// leader, is neither installing a snapshot nor catching up, has received
// what the leader had applied at its last progress report and has applied
// what it knows committed; it stops answering within directInterval of
// falling behind or losing touch with its leader.
//
// What keeps a current follower's reads fresh: a hashicorp/raft follower
// learns that an entry is committed only with the next append, which an
// idle group sends a CommitTimeout (1 s) later, so a follower answering a
// get sent right after a publish was acknowledged missed it 35 of 60
// times (nats-server v2.15.2's followers: about 3 of 60). With follower
// reads on (SetFollowerReads, for allow_direct streams), the leader sends
// its followers its commit index, an append without entries and without
// a log entry, when its write queue drains (under load the next batch's
// append carries it; after writes that follow each other within 500 us it
// waits that long for the next write), and a follower's get waits, at
// most directApplyWait, until the follower has applied what its transport
// had received when the get came. A raft barrier appended at the drain
// instead reached the followers after two disk syncs: 30 to 45 of 60
// still stale.
//
// Measured on a shared 2-core machine (3-server clusters in one process
// or on one host):
//   - serve/TestClusterDirectGetByEveryReplica, 60 publishes each followed
//     by a direct get through each server (the queue group picks any
//     replica: followers answer two thirds): 0 to 3 of 60 stale per
//     server, 1 to 5 of 180 per run over 10 runs, some beside the
//     jetstream package's tests;
//   - go test -run '^$' -bench KVReadAfterWrite -benchtime 3000x ./serve/
//     (a put, then a get through each server): 0.001 stale/op, 1.36 ms/op;
//     the leader alone answering: 0 and 0.98 ms/op;
//   - R3 publishing, bench/cluster/r3-compare.sh, the binaries of main and
//     of this change alternating, jetwal/nats-server ratios (3 runs of 2
//     rounds each): async (200,000 messages) main 1.69 1.51 0.62 0.50
//     0.64 0.96, this change 0.77 1.09 0.79 1.07 1.43 1.20 (jetwal medians
//     78k and 72k msgs/s, within the noise); sync (4,000 messages, a
//     publisher waiting for each ack) main 0.33 0.51 0.33 0.40, this
//     change 0.41 0.29 0.37 0.36 (1.23k-1.40k and 1.15k-1.41k msgs/s);
//   - the same in-process stop-and-wait writes with follower reads off and
//     on, alternating: 340/331/337 and 356/330/332 us per write (with the
//     notice sent at every drain: 373/340/366 and 398/374/406).

const (
	directQueue    = "_sys_" // nats-server's queue group of direct gets
	directInterval = 250 * time.Millisecond
	// directApplyWait bounds a follower's wait for the entries it has
	// received before it answers (Replica.AwaitApplied).
	directApplyWait = 50 * time.Millisecond
)

// directSubs is a replica's direct get subscriptions while it answers.
type directSubs struct {
	subs   []*server.Subscription
	reader *stream // read-only, over the replica's store: what a follower reads
}

// directState is the direct get side of a JetStream's clustering.
type directState struct {
	mu     sync.Mutex
	served map[string]*directSubs // by stream name
	// answered counts the gets answered through the queue subscriptions,
	// by the leader and by followers (DirectAnswered).
	byLeader, byFollower atomic.Uint64
	stop                 chan struct{}
	done                 chan struct{}
}

// directByQueue reports whether DIRECT.GET about name is left to the
// replicas' queue group: name is a replicated stream with allow_direct.
func (js *JetStream) directByQueue(name string) bool {
	a, ok := js.assignment(name)
	return ok && a.grouped() && a.Config.AllowDirect
}

// startDirect starts watching which replicated streams this server
// answers direct gets of.
func (js *JetStream) startDirect() {
	d := &js.cl.direct
	d.served = map[string]*directSubs{}
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(d.done)
		t := time.NewTicker(directInterval)
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				return
			case <-t.C:
				js.syncDirect()
			}
		}
	}()
}

// stopDirect stops the watch and every direct get subscription.
func (js *JetStream) stopDirect() {
	d := &js.cl.direct
	if d.stop == nil {
		return
	}
	close(d.stop)
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ds := range d.served {
		ds.close()
	}
	d.served = nil // a late syncDirect subscribes nothing
}

func (ds *directSubs) close() {
	for _, sub := range ds.subs {
		sub.Unsubscribe()
	}
}

// syncDirect subscribes the direct gets of each allow_direct stream this
// server leads and serves or holds a current follower of, and unsubscribes
// the others.
func (js *JetStream) syncDirect() {
	js.cl.mu.Lock()
	hosted := make(map[string]*hosted, len(js.cl.hosted))
	for name, h := range js.cl.hosted {
		hosted[name] = h
	}
	js.cl.mu.Unlock()
	d := &js.cl.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.served == nil {
		return // not started, or stopped
	}
	for _, h := range hosted {
		h.mu.Lock()
		rep, on := h.rep, !h.gone && h.asg.Config.AllowDirect && h.asg.grouped()
		h.mu.Unlock()
		if rep != nil {
			rep.SetFollowerReads(on)
		}
	}
	for name, ds := range d.served {
		if h := hosted[name]; h == nil || !js.answersDirect(h) {
			ds.close() // gone, or neither led here nor current
			delete(d.served, name)
		}
	}
	for name, h := range hosted {
		if d.served[name] != nil || !js.answersDirect(h) {
			continue
		}
		ds, err := js.subscribeDirect(name, h)
		if err != nil {
			js.log.Warn("cluster: subscribing direct gets", "stream", name, "error", err)
			continue
		}
		d.served[name] = ds
	}
}

// directSubscribed reports whether this server's queue subscription
// answers name's direct gets. Until it does (a leader that has just
// started serving subscribes within a moment), the $JS.API.> handler of
// the serving server answers them (answers), so a get sent right after a
// create or a failover is not left unanswered.
func (js *JetStream) directSubscribed(name string) bool {
	d := &js.cl.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.served[name] != nil
}

// answersDirect reports whether this server's replica should answer
// direct gets now: it leads the stream and serves it, or it follows and
// is current.
func (js *JetStream) answersDirect(h *hosted) bool {
	h.mu.Lock()
	rep, active := h.rep, h.active
	ok := !h.gone && rep != nil && h.asg.Config.AllowDirect && h.asg.grouped()
	h.mu.Unlock()
	return ok && (active != nil || rep.Current())
}

// DirectAnswered returns how many direct gets of replicated streams this
// JetStream has answered through its queue subscriptions so far, as the
// streams' leader and as a follower.
func (js *JetStream) DirectAnswered() (byLeader, byFollower uint64) {
	if !js.clustered() {
		return 0, 0
	}
	d := &js.cl.direct
	return d.byLeader.Load(), d.byFollower.Load()
}

// subscribeDirect subscribes a replica's direct gets, served by the
// stream object while this server serves the stream, else by a read-only
// one over the replica's store.
func (js *JetStream) subscribeDirect(name string, h *hosted) (*directSubs, error) {
	h.mu.Lock()
	rep := h.rep
	ds := &directSubs{reader: newStream(js, h.asg.Config, h.asg.Created, "", rep.Store())}
	h.mu.Unlock()
	d := &js.cl.direct
	serve := func(m *server.Msg) {
		r := &apiserver.Request{
			Subject: strings.Clone(m.Subject),
			Reply:   strings.Clone(m.Reply),
			Hdr:     bytes.Clone(m.Header),
			Data:    bytes.Clone(m.Data),
			Args:    strings.TrimPrefix(m.Subject, api.Prefix+"DIRECT.GET."),
			Client:  m.ClientID,
		}
		s, n := js.lookup(name), &d.byLeader
		if s == nil {
			s, n = ds.reader, &d.byFollower
		}
		n.Add(1)
		submit := func() {
			if !js.gets.submitKey(name, func() { js.directGet(s, r) }) {
				js.log.Warn("JetStream API queue full, request dropped", "subject", r.Subject)
			}
		}
		if s == ds.reader && rep.Applying() {
			// A follower answers once it has applied what it has
			// received (cluster/followerreads.go), off the gets' queue.
			go func() {
				rep.AwaitApplied(directApplyWait)
				submit()
			}()
			return
		}
		submit()
	}
	base := api.Prefix + "DIRECT.GET." + name
	for _, subj := range []string{base, base + ".>"} {
		sub, err := js.srv.Subscribe(subj, directQueue, serve)
		if err != nil {
			ds.close()
			return nil, err
		}
		ds.subs = append(ds.subs, sub)
	}
	return ds, nil
}
