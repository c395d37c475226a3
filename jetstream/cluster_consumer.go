package jetstream

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
)

// Consumer state of replicated streams. A durable consumer of a
// replicated stream runs on the stream's leader with its state in memory;
// the leader checkpoints that state into the meta group
// ("cstate/<stream>/<consumer>", consumerstate's encoding) every
// consumerSyncInterval when it changed, and at once for an ack that asks
// for a confirmation (the confirmation waits for the commit). The next
// leader starts each consumer from its last checkpoint (the cluster layer
// tells it to lead only once its copy of the meta map holds every commit
// made before, and fences the old leader's checkpoints out: see
// Replica.Checkpoint), so a confirmed ack
// is never redelivered and a plain one at most once more, after its ack
// wait, as with a consumer that lost its last acks.

const (
	cstatePrefix         = "cstate/"
	consumerSyncInterval = 250 * time.Millisecond
)

// consumerSync is the checkpointing of one led replicated stream: its
// goroutine checkpoints the stream's consumers when kicked. One ticker per
// server (watchConsumerStates) looks every consumerSyncInterval for led
// streams whose consumers changed and kicks only those, so that an idle
// stream costs no wakeup (a ticker per stream was ~130 a second on a
// server leading 33 idle streams).
type consumerSync struct {
	s    *stream
	mu   sync.Mutex // serializes checkpoints; guards last
	last map[string][]byte
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

func cstateKey(stream, consumer string) string { return cstatePrefix + stream + "/" + consumer }

// startConsumerSync checkpoints s's durable consumers when kicked, until
// stopped.
func (js *JetStream) startConsumerSync(s *stream) *consumerSync {
	cs := &consumerSync{s: s, last: map[string][]byte{}, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(cs.done)
		for {
			select {
			case <-cs.stop:
				return
			case <-cs.kick:
				for _, c := range s.cons.all() {
					if err := js.checkpointConsumer(cs, c); err != nil && !errors.Is(err, errNotLeader) {
						js.log.Warn("cluster: consumer state not checkpointed", "stream", s.name, "consumer", c.name, "error", err)
					}
				}
			}
		}
	}()
	return cs
}

func (cs *consumerSync) close() {
	close(cs.stop)
	<-cs.done
}

// changed reports whether a durable consumer's state differs from its
// last checkpoint.
func (cs *consumerSync) changed() bool {
	for _, c := range cs.s.cons.all() {
		enc, durable, err := c.checkpointState()
		if !durable || err != nil {
			continue
		}
		cs.mu.Lock()
		same := bytes.Equal(cs.last[c.name], enc)
		cs.mu.Unlock()
		if !same {
			return true
		}
	}
	return false
}

// watchConsumerStates kicks, every consumerSyncInterval until stop closes,
// the checkpointing of every led stream whose consumers changed.
func (js *JetStream) watchConsumerStates(stop <-chan struct{}) {
	t := time.NewTicker(consumerSyncInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, h := range js.hostedStreams() {
			h.mu.Lock()
			cs := h.sync
			h.mu.Unlock()
			if cs != nil && cs.changed() {
				select {
				case cs.kick <- struct{}{}:
				default: // a checkpoint is due already
				}
			}
		}
	}
}

// checkpointState is what a checkpoint of c holds (durable: c is a
// durable consumer whose state the stream's leader checkpoints). A closed
// durable consumer (its stream's leadership moved, or it was deleted) has
// nothing to checkpoint: errNotLeader, so that an ack which reached it is
// never confirmed.
func (c *consumer) checkpointState() (enc []byte, durable bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.Durable == "" || c.cs != nil {
		return nil, false, nil
	}
	if c.closed {
		return nil, true, errNotLeader
	}
	return consumerstate.Encode(&c.mem), true, nil
}

// checkpointConsumer proposes c's state when it changed since the last
// checkpoint. The state is encoded under cs.mu, so checkpoints are proposed
// in the order of the states they hold: encoded before it, the ticker's
// checkpoint of an older state could wait for cs.mu behind a confirmed
// ack's newer one and then overwrite it, and the next leader would
// redeliver a message whose ack was confirmed.
func (js *JetStream) checkpointConsumer(cs *consumerSync, c *consumer) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	enc, durable, err := c.checkpointState()
	if err != nil || !durable {
		return err
	}
	if bytes.Equal(cs.last[c.name], enc) {
		return nil
	}
	if err := c.s.rep.Checkpoint(cstateKey(c.s.name, c.name), enc); err != nil {
		return err
	}
	cs.last[c.name] = enc
	return nil
}

// confirmReplicated checkpoints c now, for a confirmed ack.
func (js *JetStream) confirmReplicated(c *consumer) error {
	h := js.hostedStream(c.s.name)
	if h == nil {
		return errNotLeader
	}
	h.mu.Lock()
	cs := h.sync
	h.mu.Unlock()
	if cs == nil {
		return errNotLeader
	}
	return js.checkpointConsumer(cs, c)
}

// restoreConsumer starts a durable consumer of a replicated stream from
// its assignment and its last checkpoint.
func (js *JetStream) restoreConsumer(s *stream, ca consumerAssignment) bool {
	b, ok := js.cl.c.Get(cstateKey(s.name, ca.Config.Durable))
	if !ok {
		return false
	}
	st, err := consumerstate.Decode(b)
	if err != nil {
		js.log.Error("cluster: consumer checkpoint unreadable; starting it afresh", "stream", s.name, "consumer", ca.Config.Durable, "error", err)
		return false
	}
	c := newConsumer(s, ca.Config.Durable, ca.Config, ca.Created, nil)
	c.mem = *st
	s.registerConsumer(c)
	return true
}

// forgetConsumerState drops the checkpoints of a stream's consumer ("" =
// all of them).
func (js *JetStream) forgetConsumerState(stream, consumer string) {
	prefix := cstatePrefix + stream + "/"
	for _, k := range js.cl.c.Keys(prefix) {
		if consumer == "" || strings.TrimPrefix(k, prefix) == consumer {
			if err := js.cl.c.Delete(k); err != nil {
				js.log.Warn("cluster: dropping a consumer checkpoint", "key", k, "error", err)
			}
		}
	}
}

// errNotLeader: this server no longer leads the stream.
var errNotLeader = errors.New("jetstream: not the stream's leader")
