package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/jetwal/jetwal/server"
)

// Requests between servers for the JetStream layer: a server asks the
// others something only they know (the state of a stream they lead) and
// gathers their answers. Both ends live in the server's internal account,
// like the meta proposals, so no client of any account can ask, answer or
// listen. The JetStream layer names the subjects; they are prefixed here
// with askPrefix so that they can never be mistaken for the cluster's own.

const askPrefix = "$JWAL.JS."

// Answer serves requests on subject (after askPrefix; wildcards allowed)
// on every server it is called on: fn gets the request's subject (without
// the prefix) and data, and its answer, unless nil, goes back to the
// asker. fn runs on a goroutine of its own. The returned function stops
// serving.
func (n *Node) Answer(subject string, fn func(subject string, data []byte) []byte) (func(), error) {
	if n.srv == nil {
		return nil, errors.New("cluster: not started")
	}
	sub, err := n.internal().Subscribe(askPrefix+subject, "", func(m *server.Msg) {
		if m.Reply == "" {
			return
		}
		subj, reply := m.Subject[len(askPrefix):], m.Reply
		data := append([]byte(nil), m.Data...)
		go func() {
			if out := fn(subj, data); out != nil {
				n.internal().Publish(reply, "", nil, out)
			}
		}()
	})
	if err != nil {
		return nil, err
	}
	return sub.Unsubscribe, nil
}

// asks are this node's requests in flight (Gather): their answers come to
// one inbox subscription of the node, made on the first Gather, so that a
// request costs no subscription (and no route interest update) of its
// own.
type asks struct {
	mu      sync.Mutex
	prefix  string // "_JWAL_INBOX.<random>."
	sub     *server.Subscription
	pending map[string]chan []byte // by the request's reply token
}

// inbox registers a request and returns its reply subject and the channel
// of its answers; done forgets it.
func (n *Node) inbox() (reply string, ch chan []byte, done func(), err error) {
	a := &n.asks
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sub == nil {
		var id [12]byte
		_, _ = rand.Read(id[:])
		prefix := "_JWAL_INBOX." + hex.EncodeToString(id[:]) + "."
		sub, err := n.internal().Subscribe(prefix+"*", "", func(m *server.Msg) {
			a.mu.Lock()
			c := a.pending[m.Subject[len(prefix):]]
			a.mu.Unlock()
			if c == nil {
				return
			}
			select {
			case c <- append([]byte(nil), m.Data...):
			default: // more answers than servers: the asker has what it needs
			}
		})
		if err != nil {
			return "", nil, nil, err
		}
		a.prefix, a.sub, a.pending = prefix, sub, map[string]chan []byte{}
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	token := hex.EncodeToString(id[:])
	ch = make(chan []byte, 64)
	a.pending[token] = ch
	return a.prefix + token, ch, func() {
		a.mu.Lock()
		delete(a.pending, token)
		a.mu.Unlock()
	}, nil
}

// closeAsks drops the inbox subscription (Close).
func (n *Node) closeAsks() {
	a := &n.asks
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sub != nil {
		a.sub.Unsubscribe()
		a.sub = nil
	}
}

// Gather asks every server serving subject (see Answer) and hands each
// answer to fn, one at a time, until fn reports it has all it needs or
// wait has passed. It returns at once when nobody serves the subject.
func (n *Node) Gather(subject string, data []byte, wait time.Duration, fn func(answer []byte) (done bool)) error {
	if n.srv == nil {
		return errors.New("cluster: not started")
	}
	if !n.internal().HasInterest(askPrefix + subject) {
		return nil
	}
	reply, ch, done, err := n.inbox()
	if err != nil {
		return err
	}
	defer done()
	n.internal().Publish(askPrefix+subject, reply, nil, data)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case b := <-ch:
			if fn(b) {
				return nil
			}
		case <-t.C:
			return nil
		}
	}
}
