package jetstream

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
)

// consumerManager is the JetStream-wide part of consumers: the CONSUMER.*
// API, the $JS.ACK.> and $JS.FC.> subscriptions, the server interest hook
// and the list of push consumers it wakes.
type consumerManager struct {
	js      *JetStream
	flushes *workQueue // confirmed acks waiting for their state to be persisted
	subs    []*server.Subscription

	// lastAcked is the consumer the previous ack went to: acks come in
	// runs for one consumer, so most skip the stream and consumer lookups.
	lastAcked atomic.Pointer[consumer]

	pushMu   sync.Mutex
	pushList atomic.Pointer[[]*consumer]
}

// startConsumers makes the consumer manager and its subscriptions (the
// CONSUMER.* handlers are apiserver's). Called by New before streams load.
func (js *JetStream) startConsumers() error {
	cm := &consumerManager{js: js, flushes: newWorkQueue(0)}
	js.cons = cm
	js.api.Register(nextOp, apiserver.Mgmt, nil) // known: served by its own subscription
	// CONSUMER.MSG.NEXT is not routed through the API's worker queues:
	// a pull request only touches memory, so it is handled on the
	// requester's goroutine (handleNext), one goroutine hop fewer per batch.
	for subj, h := range map[string]server.Handler{
		"$JS.ACK.>":                  cm.handleAck,
		"$JS.FC.>":                   cm.handleFlowControl,
		api.Prefix + nextOp + ".*.*": cm.handleNext,
	} {
		sub, err := js.srv.Subscribe(subj, "", h)
		if err != nil {
			return fmt.Errorf("jetstream: subscribe %s: %w", subj, err)
		}
		cm.subs = append(cm.subs, sub)
	}
	js.srv.SetInterestHook(cm.interestChanged)
	return nil
}

// stop ends the consumer subscriptions and workers (streams close their
// consumers themselves).
func (cm *consumerManager) stop() {
	cm.js.srv.SetInterestHook(nil)
	for _, s := range cm.subs {
		s.Unsubscribe()
	}
	cm.flushes.close()
}

func (cm *consumerManager) trackPush(c *consumer, add bool) {
	cm.pushMu.Lock()
	defer cm.pushMu.Unlock()
	var l []*consumer
	if old := cm.pushList.Load(); old != nil {
		for _, x := range *old {
			if x != c {
				l = append(l, x)
			}
		}
	}
	if add {
		l = append(l, c)
	}
	cm.pushList.Store(&l)
}

// consumerSet is a stream's consumers and, for file streams, the
// consumerstate store under its obs directory.
type consumerSet struct {
	mu     sync.Mutex
	byName map[string]*consumer
	list   atomic.Pointer[[]*consumer] // read without locks by the publish path
	obs    *consumerstate.Store
	closed bool

	// Messages of an interest stream that no consumer wanted when stored,
	// waiting for removal on the JetStream work queue (consumer_retention.go).
	unwantedMu     sync.Mutex
	unwanted       []uint64
	unwantedQueued bool
}

func (cs *consumerSet) get(name string) *consumer {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byName[name]
}

func (cs *consumerSet) all() []*consumer {
	if l := cs.list.Load(); l != nil {
		return *l
	}
	return nil
}

func (cs *consumerSet) count() int { return len(cs.all()) }

// publishLocked refreshes the lock-free list. Caller holds mu.
func (cs *consumerSet) publishLocked() {
	l := make([]*consumer, 0, len(cs.byName))
	for _, c := range cs.byName {
		l = append(l, c)
	}
	sort.Slice(l, func(i, j int) bool { return l[i].name < l[j].name })
	cs.list.Store(&l)
}

// notifyConsumers wakes the consumers that deliver subj; the stream calls
// it once a new message is visible. It reports whether any consumer did.
func (s *stream) notifyConsumers(subj string) bool {
	woke := false
	for _, c := range s.cons.all() {
		if c.matchesFast(subj) {
			c.signal()
			woke = true
		}
	}
	return woke
}

// matchesFast is matches without the lock: filters are replaced, never
// changed in place, so a racy read sees an old or a new slice. To keep the
// race detector quiet it uses an atomic copy.
func (c *consumer) matchesFast(subj string) bool {
	f := c.filterSnap.Load()
	if f == nil || len(*f) == 0 {
		return true
	}
	for _, x := range *f {
		if matchFilter(x, subj) {
			return true
		}
	}
	return false
}

// consumerStoreOptions gives the consumer state the streams' sync policy
// (one type, durable.Policy, for both) and the stream's data key, nil for
// a plain stream (doc.go: one data key per stream).
func (js *JetStream) consumerStoreOptions(dk *crypt.DataKey) consumerstate.Options {
	return consumerstate.Options{FS: js.cfg.FS, Sync: durable.Policy{Mode: js.cfg.Sync, Interval: js.cfg.SyncInterval}, Key: dk}
}

// consumerMeta is what meta.inf of a durable consumer holds.
type consumerMeta struct {
	Created time.Time          `json:"created"`
	Config  api.ConsumerConfig `json:"config"`
	// LastPerSubject is, for deliver policy last_per_subject, the stream
	// sequences picked at creation (the last message of each subject), so
	// a restart resumes the same positioning.
	LastPerSubject []uint64 `json:"last_per_subject,omitempty"`
}

// openObs opens the consumerstate store of a file stream.
func (s *stream) openObs() error {
	if s.dir == "" {
		return nil
	}
	st, err := consumerstate.Open(filepath.Join(s.dir, obsDir), s.js.consumerStoreOptions(s.files.dk))
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", s.name, err)
	}
	s.cons.mu.Lock()
	s.cons.obs = st
	s.cons.mu.Unlock()
	return nil
}

// loadConsumers opens the durable consumers of a file stream at start. A
// consumer that does not load is reported and skipped.
func (s *stream) loadConsumers() {
	if err := s.openObs(); err != nil {
		s.js.reportLoadError(err)
		return
	}
	obs := s.cons.obs
	names, err := obs.List()
	if err != nil {
		s.js.reportLoadError(fmt.Errorf("jetstream: stream %s: list consumers: %w", s.name, err))
		return
	}
	for _, n := range names {
		cs, err := obs.Load(n)
		if err != nil {
			s.js.reportLoadError(fmt.Errorf("jetstream: stream %s: consumer %s not loaded: %w", s.name, n, err))
			continue
		}
		var meta consumerMeta
		if err := json.Unmarshal(cs.Config(), &meta); err != nil {
			s.js.reportLoadError(fmt.Errorf("jetstream: stream %s: consumer %s: %s: %w", s.name, n,
				filepath.Join(cs.Dir(), "meta.inf"), err))
			continue
		}
		c := newConsumer(s, n, meta.Config, meta.Created, cs)
		c.restoreLastPerSubject(meta.LastPerSubject)
		s.registerConsumer(c)
		s.js.logConsumerRecovery(s.name, n, cs.Recovery())
		s.js.log.Info("consumer loaded", "stream", s.name, "consumer", n)
	}
}

// registerConsumer registers and starts a consumer loaded from its state.
func (s *stream) registerConsumer(c *consumer) {
	s.cons.mu.Lock()
	if s.cons.byName == nil {
		s.cons.byName = make(map[string]*consumer)
	}
	s.cons.byName[c.name] = c
	s.cons.publishLocked()
	s.cons.mu.Unlock()
	if c.push {
		s.js.cons.trackPush(c, true)
	}
	go c.run()
	c.signal()
}

// removeConsumer stops a consumer and deletes its state. inactive marks a
// deletion for inactivity (logged).
func (s *stream) removeConsumer(c *consumer, inactive bool) error {
	s.cons.mu.Lock()
	if s.cons.byName[c.name] != c {
		s.cons.mu.Unlock()
		return nil
	}
	delete(s.cons.byName, c.name)
	s.cons.publishLocked()
	obs := s.cons.obs
	s.cons.mu.Unlock()
	s.js.cons.trackPush(c, false)
	c.shutdown(true)
	s.consumerGone(c)
	var err error
	if c.cs != nil && obs != nil {
		if err = obs.Delete(c.name); errors.Is(err, consumerstate.ErrNotFound) {
			err = nil
		}
	}
	if inactive {
		s.js.log.Info("consumer deleted for inactivity", "stream", s.name, "consumer", c.name)
	}
	s.js.adviseConsumer(s.name, c.name, api.ActionDelete)
	return err
}

// closeConsumers stops every consumer and closes the obs store, keeping the
// durable state (server shutdown). With remove, it is a stream deletion:
// waiting pulls hear 409 Consumer Deleted.
func (s *stream) closeConsumers(remove bool) {
	s.cons.mu.Lock()
	list := make([]*consumer, 0, len(s.cons.byName))
	for _, c := range s.cons.byName {
		list = append(list, c)
	}
	s.cons.byName = nil
	s.cons.publishLocked()
	s.cons.closed = true
	obs := s.cons.obs
	s.cons.obs = nil
	s.cons.mu.Unlock()
	for _, c := range list {
		if c.push {
			s.js.cons.trackPush(c, false)
		}
		c.shutdown(remove)
		<-c.done
		if remove {
			s.js.adviseConsumer(s.name, c.name, api.ActionDelete)
		}
	}
	if obs != nil {
		if err := obs.Close(); err != nil {
			s.js.log.Error("closing consumer state", "stream", s.name, "error", err)
		}
	}
}

func (s *stream) hasMsg(seq uint64) bool {
	var m store.Msg
	return s.store.Load(seq, &m) == nil
}

// ephemeralName makes an 8-character consumer name.
func ephemeralName() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b [8]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
