package cluster

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/server"
)

// The meta group's entries: a put or a delete of one key of the map, a
// no-op that SyncMeta commits to learn how far the log reaches, or a put
// or delete that applies only while a fence key holds a token (fenced:
// Replica.Checkpoint).
//
//	1 | uvarint len | key | value      put
//	2 | uvarint len | key              delete
//	3                                  no-op
//	4 | uvarint len | fence key | uvarint len | token | put or delete entry
//	                                   fenced
const (
	opPut    = 1
	opDelete = 2
	opNoop   = 3
	opFenced = 4
)

// ErrFenced: a fenced entry found its fence holding another token (another
// server has led the stream since).
var ErrFenced = errors.New("cluster: fenced out: another server leads the stream now")

// encodeFenced wraps a put or delete entry in a fence.
func encodeFenced(fence string, token []byte, entry []byte) []byte {
	b := binary.AppendUvarint([]byte{opFenced}, uint64(len(fence)))
	b = append(b, fence...)
	b = binary.AppendUvarint(b, uint64(len(token)))
	b = append(b, token...)
	return append(b, entry...)
}

// decodeFenced splits a fenced entry after its op byte.
func decodeFenced(b []byte) (fence string, token, entry []byte, err error) {
	field := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		f := b[k : k+int(n)]
		b = b[k+int(n):]
		return f, true
	}
	f, ok1 := field()
	t, ok2 := field()
	if !ok1 || !ok2 {
		return "", nil, nil, errors.New("cluster: malformed fenced meta entry")
	}
	return string(f), t, b, nil
}

// proposeSubject is served by the meta leader: other servers forward
// their proposals there.
const proposeSubject = "$JWAL.CLUSTER.META.PROPOSE"

// ProposeTimeout bounds a proposal, forwarding and retries included.
const ProposeTimeout = 10 * time.Second

// ErrNoLeader is returned when a proposal found no meta leader in time.
var ErrNoLeader = errors.New("cluster: no meta leader")

func encodeMeta(key string, val []byte, del bool) []byte {
	op := byte(opPut)
	if del {
		op = opDelete
	}
	b := binary.AppendUvarint([]byte{op}, uint64(len(key)))
	b = append(b, key...)
	return append(b, val...)
}

var noopEntry = []byte{opNoop}

func decodeMeta(b []byte) (key string, val []byte, del bool, err error) {
	if len(b) < 2 || (b[0] != opPut && b[0] != opDelete) {
		return "", nil, false, errors.New("cluster: malformed meta entry")
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)-1-k) {
		return "", nil, false, errors.New("cluster: malformed meta entry")
	}
	key = string(b[1+k : 1+k+int(n)])
	return key, b[1+k+int(n):], b[0] == opDelete, nil
}

// meta is the meta group: its raft and the replicated map (its FSM).
type meta struct {
	n   *Node
	g   *group
	put func(string, []byte)
	del func(string)

	mu  sync.RWMutex
	kv  map[string][]byte
	sub *server.Subscription // proposeSubject, while leader

	applied atomic.Uint64  // index of the last entry Apply finished
	notice  *noticer       // tells the followers each commit (commitnotice.go)
	resumed *raft.Observer // a follower answers heartbeats again (watchResumed)

	done     chan struct{} // closed by stop: the node is closing
	stopOnce sync.Once
}

func startMeta(n *Node, put func(string, []byte), del func(string)) (*meta, error) {
	m := &meta{n: n, put: put, del: del, kv: make(map[string][]byte), done: make(chan struct{})}
	g, err := n.startGroup("_meta", filepath.Join(n.opts.Dir, "meta"), m, n.opts.Peers, n.raftConfig(), groupStart{})
	if err != nil {
		return nil, err
	}
	m.g = g
	m.notice = newNoticer(g, n.opts.Self, m.done)
	obs := make(chan raft.Observation, 8)
	m.resumed = raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.ResumedHeartbeatObservation)
		return ok
	})
	g.r.RegisterObserver(m.resumed)
	go m.watchResumed(obs)
	go m.watchLeader()
	go m.announce()
	return m, nil
}

// Apply applies one committed entry and tells the JetStream layer.
func (m *meta) Apply(l *raft.Log) any {
	// Stored when the entry is fully applied, callbacks included: raft's
	// own AppliedIndex moves when it hands entries to this goroutine.
	defer m.applied.Store(l.Index)
	if l.Type != raft.LogCommand || len(l.Data) == 1 && l.Data[0] == opNoop {
		return nil
	}
	var (
		key string
		val []byte
		del bool
		err error
	)
	entry := l.Data
	if len(entry) > 0 && entry[0] == opFenced {
		var fence string
		var token []byte
		if fence, token, entry, err = decodeFenced(entry[1:]); err == nil {
			m.mu.RLock()
			cur, ok := m.kv[fence]
			m.mu.RUnlock()
			if !ok || !bytes.Equal(cur, token) {
				return ErrFenced
			}
		}
	}
	if err == nil {
		key, val, del, err = decodeMeta(entry)
	}
	if err != nil {
		m.n.log.Error("meta group: entry not applied", "index", l.Index, "error", err)
		return err
	}
	m.mu.Lock()
	if del {
		delete(m.kv, key)
	} else {
		m.kv[key] = append([]byte(nil), val...)
	}
	m.mu.Unlock()
	if del {
		m.del(key)
	} else {
		m.put(key, val)
	}
	return nil
}

// Snapshot copies the map.
func (m *meta) Snapshot() (raft.FSMSnapshot, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, err := json.Marshal(m.kv)
	return metaSnapshot(b), err
}

// Restore replaces the map with a snapshot's and tells the JetStream layer
// what went and what is there now.
func (m *meta) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var kv map[string][]byte
	if err := json.NewDecoder(rc).Decode(&kv); err != nil {
		return fmt.Errorf("cluster: meta snapshot: %w", err)
	}
	if kv == nil {
		kv = map[string][]byte{}
	}
	m.mu.Lock()
	old := m.kv
	m.kv = kv
	m.mu.Unlock()
	for k := range old {
		if _, ok := kv[k]; !ok {
			m.del(k)
		}
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys) // streams before their consumers
	for _, k := range keys {
		m.put(k, kv[k])
	}
	return nil
}

type metaSnapshot []byte

func (s metaSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (metaSnapshot) Release() {}

// watchResumed sends the commit index to the followers when the leader's
// heartbeats reach one again after failing (a server back from a restart,
// or a partition): it then applies what its log holds at once, rather
// than at the next append.
func (m *meta) watchResumed(obs <-chan raft.Observation) {
	for {
		select {
		case <-m.done:
			return
		case <-obs:
			m.notice.send()
		}
	}
}

// watchLeader serves proposeSubject while this server leads the group.
func (m *meta) watchLeader() {
	for {
		select {
		case <-m.done:
			return
		case lead := <-m.g.r.LeaderCh():
			m.mu.Lock()
			if lead && m.sub == nil {
				sub, err := m.n.internal().Subscribe(proposeSubject, "", m.serveProposal)
				if err != nil {
					m.n.log.Error("meta group: subscribe", "error", err)
				}
				m.sub = sub
			} else if !lead && m.sub != nil {
				m.sub.Unsubscribe()
				m.sub = nil
			}
			m.mu.Unlock()
			if lead {
				m.n.log.Info("JetStream cluster: this server is the meta leader")
			}
		}
	}
}

// serveProposal applies a forwarded proposal and answers "+<log index>"
// or "-<error>".
func (m *meta) serveProposal(msg *server.Msg) {
	if msg.Reply == "" {
		return
	}
	data := append([]byte(nil), msg.Data...)
	reply := msg.Reply
	go func() {
		idx, err := m.apply(data, nil)
		resp := "+" + strconv.FormatUint(idx, 10)
		if err != nil {
			resp = "-" + err.Error()
		}
		m.n.internal().Publish(reply, "", nil, []byte(resp))
	}()
}

// apply commits entry (this server leads) and returns its log index. It
// waits for the entry to be applied here, which a meta Apply busy in a
// callback (one that closes a replica, say) delays: closing abort, or the
// node, gives up at once (ErrClosed), so that no close waits on an Apply
// that waits on it.
func (m *meta) apply(entry []byte, abort <-chan struct{}) (uint64, error) {
	f := m.g.r.Apply(entry, ProposeTimeout)
	if err := awaitFuture(f, m.done, abort); err != nil {
		return 0, err
	}
	// Every server acts on every meta entry (a stream's assignment
	// starts its replicas): the followers are told it committed now, not
	// with raft's next append (commitnotice.go).
	m.notice.send()
	if err, ok := f.Response().(error); ok {
		return 0, err
	}
	return f.Index(), nil
}

// propose commits entry through the leader: here when this server leads,
// else forwarded; retried until the timeout while there is no leader. It
// returns the entry's log index. Closing abort gives up waiting for a
// leader.
func (m *meta) propose(entry []byte, abort <-chan struct{}) (uint64, error) {
	deadline := time.Now().Add(ProposeTimeout)
	var last error = ErrNoLeader
	for time.Now().Before(deadline) {
		if m.g.r.State() == raft.Leader {
			idx, err := m.apply(entry, abort)
			if err == nil || !errors.Is(err, raft.ErrNotLeader) && !errors.Is(err, raft.ErrLeadershipLost) {
				return idx, err
			}
			last = err
		} else if idx, err := m.forward(entry, time.Until(deadline), abort); err == nil {
			return idx, nil
		} else if !errors.Is(err, ErrNoLeader) {
			return 0, err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-m.done:
			return 0, ErrClosed
		case <-abort:
			return 0, ErrClosed
		}
	}
	return 0, last
}

// forward sends entry to the meta leader and waits for its answer: the
// entry's log index, or an error. Closing abort, or the node, gives up.
func (m *meta) forward(entry []byte, wait time.Duration, abort <-chan struct{}) (uint64, error) {
	if m.n.srv == nil || !m.n.internal().HasInterest(proposeSubject) {
		return 0, ErrNoLeader
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	inbox := "_JWAL_INBOX." + hex.EncodeToString(id[:])
	ch := make(chan string, 1)
	sub, err := m.n.internal().Subscribe(inbox, "", func(msg *server.Msg) {
		select {
		case ch <- string(msg.Data):
		default:
		}
	})
	if err != nil {
		return 0, err
	}
	defer sub.Unsubscribe()
	m.n.internal().Publish(proposeSubject, inbox, nil, entry)
	select {
	case resp := <-ch:
		return parseProposalAnswer(resp)
	case <-time.After(min(wait, 2*time.Second)):
		return 0, ErrNoLeader
	case <-m.done:
		return 0, ErrClosed
	case <-abort:
		return 0, ErrClosed
	}
}

// parseProposalAnswer reads serveProposal's answer.
func parseProposalAnswer(resp string) (uint64, error) {
	if msg, ok := strings.CutPrefix(resp, "-"); ok {
		if strings.Contains(msg, raft.ErrNotLeader.Error()) || strings.Contains(msg, raft.ErrLeadershipLost.Error()) {
			return 0, ErrNoLeader
		}
		if msg == ErrFenced.Error() {
			return 0, ErrFenced
		}
		return 0, errors.New(msg)
	}
	idx, err := strconv.ParseUint(strings.TrimPrefix(resp, "+"), 10, 64)
	if err != nil || !strings.HasPrefix(resp, "+") {
		return 0, fmt.Errorf("cluster: malformed answer from the meta leader: %q", resp)
	}
	return idx, nil
}

// stop makes every wait on the meta group give up (ErrClosed): Node.Close
// calls it before it closes anything, since a replica's close waits for
// its goroutines, which may be waiting for a proposal whose application
// waits for the meta group's Apply, which may be in a callback closing
// that very replica (a stream deleted as the node stops).
func (m *meta) stop() {
	m.stopOnce.Do(func() { close(m.done) })
}

func (m *meta) close() error {
	m.stop()
	m.mu.Lock()
	if m.sub != nil {
		m.sub.Unsubscribe()
		m.sub = nil
	}
	m.mu.Unlock()
	m.g.r.DeregisterObserver(m.resumed)
	err := m.g.close()
	m.notice.wait()
	return err
}

// Put commits key=val through the meta group.
func (n *Node) Put(key string, val []byte) error {
	_, err := n.propose(encodeMeta(key, val, false))
	return err
}

// PutIf commits key=val only while key holds old (compare and swap):
// ErrFenced when it holds something else or nothing. The entry is a
// fenced put whose fence is key itself.
func (n *Node) PutIf(key string, old, val []byte) error {
	_, err := n.propose(encodeFenced(key, old, encodeMeta(key, val, false)))
	return err
}

// Delete commits the removal of key through the meta group.
func (n *Node) Delete(key string) error {
	_, err := n.propose(encodeMeta(key, nil, true))
	return err
}

func (n *Node) propose(entry []byte) (uint64, error) {
	m := n.metaGroup()
	if m == nil {
		return 0, ErrClosed
	}
	return m.propose(entry, nil)
}

// SyncMeta waits until this server's copy of the map holds every change
// committed before the call (a read barrier): it commits a no-op through
// the leader and waits for this server to apply the log up to it. Get and
// Keys read the local copy, which a follower, or a new leader that has not
// yet applied its predecessor's last entries, may hold behind the commit;
// after SyncMeta they see at least what was committed when it was called.
// It must not be called from put or del (the apply goroutine it waits for).
func (n *Node) SyncMeta() error {
	if err := n.commitApplied(noopEntry, nil); err != nil {
		return fmt.Errorf("cluster: meta read barrier: %w", err)
	}
	return nil
}

// commitApplied commits entry through the meta leader and waits until this
// server has applied the log up to it. Closing abort gives up.
func (n *Node) commitApplied(entry []byte, abort <-chan struct{}) error {
	m := n.metaGroup()
	if m == nil {
		return ErrClosed
	}
	deadline := time.Now().Add(ProposeTimeout)
	for {
		idx, err := m.propose(entry, abort)
		if err != nil {
			return err
		}
		// A snapshot installed here instead of the entries up to this one
		// does not pass through Apply; a no-op, a second later, is applied
		// after it.
		retry := time.Now().Add(time.Second)
		for m.applied.Load() < idx && time.Now().Before(retry) {
			if time.Now().After(deadline) {
				return fmt.Errorf("log applied to %d, not yet to %d", m.applied.Load(), idx)
			}
			select {
			case <-time.After(2 * time.Millisecond):
			case <-m.done:
				return ErrClosed
			case <-abort:
				return ErrClosed
			}
		}
		if m.applied.Load() >= idx {
			return nil
		}
		entry = noopEntry
	}
}

// Get reads key from this server's copy of the map.
func (n *Node) Get(key string) ([]byte, bool) {
	m := n.metaGroup()
	if m == nil {
		return nil, false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.kv[key]
	return v, ok
}

// Keys lists the keys with prefix, sorted.
func (n *Node) Keys(prefix string) []string {
	m := n.metaGroup()
	if m == nil {
		return nil
	}
	m.mu.RLock()
	var out []string
	for k := range m.kv {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	m.mu.RUnlock()
	sort.Strings(out)
	return out
}

// IsMetaLeader reports whether this server leads the meta group.
func (n *Node) IsMetaLeader() bool {
	m := n.metaGroup()
	return m != nil && m.g.r.State() == raft.Leader
}

// MetaLeader returns the meta leader's server name, "" when none.
func (n *Node) MetaLeader() string {
	m := n.metaGroup()
	if m == nil {
		return ""
	}
	return n.leaderName(m.g.r)
}

// WaitMetaLeader waits up to d for the meta group to have a leader.
func (n *Node) WaitMetaLeader(d time.Duration) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if m := n.metaGroup(); m != nil {
			if addr, _ := m.g.r.LeaderWithID(); addr != "" {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func (n *Node) metaGroup() *meta {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.meta
}
