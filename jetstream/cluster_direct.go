package jetstream

import (
	"bytes"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
)

// Direct gets of replicated streams, answered by the stream's leader.
// The leader of an allow_direct stream's group subscribes
// $JS.API.DIRECT.GET.<stream> and $JS.API.DIRECT.GET.<stream>.> in the
// queue group "_sys_", nats-server's, and answers from its own store; the
// $JS.API.> handler leaves these requests to the queue group (answers).
//
// nats-server lets every current follower answer too. jetwal's followers
// do not: a hashicorp/raft follower learns that an entry is committed one
// append after its leader (with the next entries, or after the group's
// CommitTimeout), so a follower answering a get sent right after a
// publish was acknowledged missed it most of the time (35 of 60 gets per
// server in a 3-server run, against about 3 of 60 for nats-server's
// followers), and making it wait for the commit cost up to a commit
// timeout per get. Until followers learn commits at once, reads stay on
// the leader, which has applied every write it acknowledged.
const (
	directQueue    = "_sys_" // nats-server's queue group of direct gets
	directInterval = 250 * time.Millisecond
)

// directSubs is a leader's direct get subscriptions.
type directSubs struct {
	subs []*server.Subscription
}

// directState is the direct get side of a JetStream's clustering.
type directState struct {
	mu     sync.Mutex
	served map[string]*directSubs // by stream name
	stop   chan struct{}
	done   chan struct{}
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
// server leads and serves, and unsubscribes the others.
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
	for name, ds := range d.served {
		if h := hosted[name]; h == nil || !js.answersDirect(h) {
			ds.close() // gone, or no longer led here
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
// direct gets now: it leads the stream and serves it.
func (js *JetStream) answersDirect(h *hosted) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.gone && h.rep != nil && h.active != nil && h.asg.Config.AllowDirect && h.asg.grouped()
}

// subscribeDirect subscribes a leader's direct gets, served by the
// stream object.
func (js *JetStream) subscribeDirect(name string, h *hosted) (*directSubs, error) {
	ds := &directSubs{}
	serve := func(m *server.Msg) {
		r := &apiserver.Request{
			Subject: strings.Clone(m.Subject),
			Reply:   strings.Clone(m.Reply),
			Hdr:     bytes.Clone(m.Header),
			Data:    bytes.Clone(m.Data),
			Args:    strings.TrimPrefix(m.Subject, api.Prefix+"DIRECT.GET."),
			Client:  m.ClientID,
		}
		s := js.lookup(name)
		if s == nil {
			return // no longer served here; the next leader answers
		}
		if !js.gets.submitKey(name, func() { js.directGet(s, r) }) {
			js.log.Warn("JetStream API queue full, request dropped", "subject", r.Subject)
		}
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
