package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	var id [12]byte
	_, _ = rand.Read(id[:])
	inbox := "_JWAL_INBOX." + hex.EncodeToString(id[:])
	ch := make(chan []byte, 64)
	sub, err := n.internal().Subscribe(inbox, "", func(m *server.Msg) {
		select {
		case ch <- append([]byte(nil), m.Data...):
		default: // more answers than servers: the asker has what it needs
		}
	})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	n.internal().Publish(askPrefix+subject, inbox, nil, data)
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
