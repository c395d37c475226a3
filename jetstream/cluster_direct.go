package jetstream

import (
	"bytes"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// Direct gets of replicated streams, answered by every current replica.
// As with nats-server, each member of an allow_direct stream's group that
// is current (Replica.Current: its leader, or a follower in contact with
// the leader that has applied at least 90% of what it knows committed)
// subscribes $JS.API.DIRECT.GET.<stream> and $JS.API.DIRECT.GET.<stream>.>
// in the queue group "_sys_", so that each request is answered once, by
// one of them (the routes prefer a member on the requester's server), from
// that member's own copy. The $JS.API.> handler leaves these requests to
// the queue group (answers). A follower that falls out of contact with
// its leader unsubscribes; nats-server's follower, once subscribed, keeps
// answering.
//
// A follower reads through a read-only stream object over its replica's
// store (never subscribed to the stream's subjects, never written), made
// when it starts answering and dropped when it stops.

const (
	directQueue    = "_sys_" // nats-server's queue group of direct gets
	directInterval = 250 * time.Millisecond
)

// directSubs is a replica's direct get subscriptions while it answers.
type directSubs struct {
	subs   []*server.Subscription
	reader *stream // a follower's read-only stream; nil on the leader
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
	return ok && len(a.Peers) > 1 && a.Config.AllowDirect
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
	for name, ds := range d.served {
		ds.close()
		delete(d.served, name)
	}
}

func (ds *directSubs) close() {
	for _, sub := range ds.subs {
		sub.Unsubscribe()
	}
}

// syncDirect subscribes the direct gets of each allow_direct stream this
// server holds a current replica of, and unsubscribes the others.
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
	for name, ds := range d.served {
		if h := hosted[name]; h == nil || !js.answersDirect(h) || (ds.reader == nil) != h.isActive() {
			ds.close() // gone, not current, or its role changed
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

func (h *hosted) isActive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.active != nil
}

// answersDirect reports whether this server's replica should answer
// direct gets now.
func (js *JetStream) answersDirect(h *hosted) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.gone && h.rep != nil && h.asg.Config.AllowDirect && len(h.asg.Peers) > 1 && h.rep.Current()
}

// subscribeDirect subscribes a replica's direct gets: served by the
// stream object while this server leads, else by a read-only one.
func (js *JetStream) subscribeDirect(name string, h *hosted) (*directSubs, error) {
	h.mu.Lock()
	ds := &directSubs{}
	if h.active == nil {
		ds.reader = newStream(js, h.asg.Config, h.asg.Created, "", h.rep.Store())
	}
	h.mu.Unlock()
	serve := func(m *server.Msg) {
		r := &apiRequest{
			subject: strings.Clone(m.Subject),
			reply:   strings.Clone(m.Reply),
			hdr:     bytes.Clone(m.Header),
			data:    bytes.Clone(m.Data),
			args:    strings.TrimPrefix(m.Subject, api.Prefix+"DIRECT.GET."),
			client:  m.ClientID,
		}
		s := ds.reader
		if s == nil {
			s = js.lookup(name)
		}
		if !js.gets.submitKey(name, func() { js.directGet(s, r) }) {
			js.log.Warn("JetStream API queue full, request dropped", "subject", r.subject)
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
