// Package mux carries many raft groups between servers over one listening
// port: every replicated stream of jetwal is a raft group of its own, and
// a server should not open a port per group.
//
// The mux does not listen or authenticate. The server's route listener
// accepts a raft connection, checks it as it checks a route (the route
// TLS handshake, the cluster credentials in the connection's first line;
// server/route_raft.go) and only then gives it to Dispatch with the group
// it names; Dispatch hands it to that group's Layer, a raft.StreamLayer,
// or, when the group is unknown, holds it a little while for the group
// to start (a new stream's members start one after the other) and then
// closes it (raft's transport retries). A
// Layer's Dial opens the other end through the DialFunc the Mux was made
// with (server.Server.DialRaft), so an outgoing raft connection gets the
// same TLS and credentials. After the first line, a connection carries
// hashicorp/raft's NetworkTransport protocol unchanged.
//
// One connection per pair of servers is not a group's: the shared
// heartbeats' (beats.go), named "$beats" in its first line, which no group
// name can be. It reaches Dispatch the same way, so only the route
// listener's authenticated peers send rounds, and a round reaches only
// groups whose Transport shares heartbeats.
package mux

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// ErrClosed is returned by Accept and Dial on a closed Layer.
var ErrClosed = errors.New("mux: closed")

// DialFunc opens a connection for group to the server at address whose
// other end reaches that server's Dispatch, within timeout.
type DialFunc func(address, group string, timeout time.Duration) (net.Conn, error)

// Parking of connections for a group not started yet: a new stream's
// group starts on every member when it applies the stream's assignment,
// one after the other, and the first member to campaign dials the others
// at once. Its vote request then waits here for the group to start
// instead of failing, which would cost the candidate an election timeout
// (500 ms to 1 s). Only the route listener's authenticated peers reach
// Dispatch; the bound keeps what they can park small.
const (
	// DefaultPark is how long a connection for an unknown group waits for
	// the group's Layer before it is closed.
	DefaultPark = 2 * time.Second
	// maxParked bounds the connections waiting at once; others for
	// unknown groups are closed at once.
	maxParked = 256
)

// Mux dispatches incoming connections to the layers of its groups.
type Mux struct {
	addr net.Addr
	dial DialFunc
	log  *slog.Logger
	park time.Duration // DefaultPark; tests shorten it (guarded by mu)

	beats *beater // the shared heartbeats (beats.go)

	mu     sync.Mutex
	groups map[string]*Layer
	births map[string]*birth // groups connections are parked for
	parked int               // connections parked, all groups
	closed bool
	done   chan struct{} // closed by Close
}

// birth is closed when its group's Layer is made, waking the connections
// parked for it.
type birth struct {
	ch      chan struct{}
	waiters int
}

// New returns a Mux whose layers advertise addr (the address other servers
// dial to reach this one) and dial with dial. log may be nil.
func New(addr net.Addr, dial DialFunc, log *slog.Logger) *Mux {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Mux{addr: addr, dial: dial, log: log, park: DefaultPark,
		groups: make(map[string]*Layer), births: make(map[string]*birth), done: make(chan struct{})}
	m.beats = newBeater(m)
	return m
}

// ValidGroup reports whether name can name a group: 1 to 200 printable
// ASCII bytes without spaces.
func ValidGroup(name string) bool {
	if name == "" || len(name) > 200 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// Layer returns the stream layer of group, creating it. A NetworkTransport
// built on it (raft.NewNetworkTransport) speaks for that group only.
func (m *Mux) Layer(group string) (*Layer, error) {
	if !ValidGroup(group) {
		return nil, fmt.Errorf("mux: invalid group name %q", group)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if l, ok := m.groups[group]; ok {
		return l, nil
	}
	l := &Layer{mux: m, group: group, conns: make(chan net.Conn, 16), done: make(chan struct{})}
	m.groups[group] = l
	if b := m.births[group]; b != nil {
		close(b.ch)
		delete(m.births, group)
	}
	return l, nil
}

// Dispatch hands c, an authenticated connection whose first line named
// group, to that group's layer. A connection for a group not started
// waits for it up to DefaultPark (at most maxParked at once), then is
// closed. It blocks while c waits, and while the layer's handler serves
// c (SetHandler): call it on c's own goroutine.
func (m *Mux) Dispatch(c net.Conn, group string) {
	if group == beatsGroup {
		m.answerBeats(c)
		return
	}
	m.mu.Lock()
	l := m.groups[group]
	if l == nil && !m.closed && m.parked < maxParked && ValidGroup(group) {
		b := m.births[group]
		if b == nil {
			b = &birth{ch: make(chan struct{})}
			m.births[group] = b
		}
		b.waiters++
		m.parked++
		park := m.park
		m.mu.Unlock()
		t := time.NewTimer(park)
		select {
		case <-b.ch:
		case <-t.C:
		}
		t.Stop()
		m.mu.Lock()
		b.waiters--
		m.parked--
		if b.waiters == 0 && m.births[group] == b {
			delete(m.births, group)
		}
		l = m.groups[group]
	}
	m.mu.Unlock()
	if l == nil {
		m.log.Debug("raft mux: connection for an unknown group", "group", group, "remote", c.RemoteAddr().String())
		c.Close()
		return
	}
	if l.hand(c) {
		return
	}
	select {
	case l.conns <- c:
	case <-l.done:
		c.Close()
		return
	}
	l.handQueued() // a handler set while c waited for room is given c
}

// hand serves c on this goroutine if the layer has a handler (SetHandler)
// and reports true, or queues c for Accept if there is room (true too);
// false: the queue is full.
func (l *Layer) hand(c net.Conn) bool {
	l.hmu.Lock()
	fn := l.handler
	if fn == nil {
		defer l.hmu.Unlock()
		select {
		case l.conns <- c:
			return true
		default:
			return false
		}
	}
	l.hmu.Unlock()
	tc, err := l.track(c, true)
	if err != nil {
		return true // the layer is closed: track closed c
	}
	fn(tc)
	return true
}

// SetHandler makes fn serve every connection accepted for the group from
// now on, each on the goroutine that dispatched it (the one the route
// listener started for it), instead of queueing it for Accept: a group
// then needs no goroutine of its own waiting in Accept. The connections
// already queued are served on goroutines of their own.
func (l *Layer) SetHandler(fn func(net.Conn)) {
	l.hmu.Lock()
	defer l.hmu.Unlock()
	l.handler = fn
	l.drainLocked()
}

// handQueued serves the queued connections if a handler is set.
func (l *Layer) handQueued() {
	l.hmu.Lock()
	defer l.hmu.Unlock()
	if l.handler != nil {
		l.drainLocked()
	}
}

func (l *Layer) drainLocked() {
	for {
		select {
		case c := <-l.conns:
			if tc, err := l.track(c, true); err == nil {
				go l.handler(tc)
			}
		default:
			return
		}
	}
}

// Close closes every layer.
func (m *Mux) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.done)
	groups := m.groups
	m.groups = map[string]*Layer{}
	for g, b := range m.births {
		close(b.ch) // the parked connections find no group and close
		delete(m.births, g)
	}
	m.mu.Unlock()
	m.beats.close()
	for _, l := range groups {
		l.shut()
	}
	return nil
}

// Layer is one group's raft.StreamLayer.
type Layer struct {
	mux   *Mux
	group string
	conns chan net.Conn // accepted, for Accept (no handler set yet)
	done  chan struct{}
	once  sync.Once

	// hmu guards handler, and makes its check and a queueing of a
	// connection one step, so none is left queued once it is set.
	hmu     sync.Mutex
	handler func(net.Conn) // SetHandler
	// beat answers the group's shared heartbeats (beats.go); set by its
	// Transport.
	beat func(*raft.AppendEntriesRequest) (raft.AppendEntriesResponse, error)

	// live holds the connections handed to raft (accepted or dialed) and
	// not yet closed: closing the layer closes them, so that an RPC raft
	// is waiting on fails at once instead of at the transport's timeout.
	// raft's Shutdown waits for its replication and vote goroutines, and
	// NetworkTransport.Close does not close their connections.
	liveMu sync.Mutex
	live   map[*liveConn]struct{}
	// handlers counts the accepted connections raft has not closed yet:
	// each is served by a NetworkTransport goroutine, which closes it when
	// it returns (WaitHandlers).
	handlers sync.WaitGroup
}

// liveConn is a connection of a layer, removed from it when closed.
type liveConn struct {
	net.Conn
	l        *Layer
	once     sync.Once
	accepted bool
}

func (c *liveConn) Close() error {
	c.once.Do(func() {
		c.l.liveMu.Lock()
		delete(c.l.live, c)
		c.l.liveMu.Unlock()
		if c.accepted {
			c.l.handlers.Done()
		}
	})
	return c.Conn.Close()
}

// track registers c with the layer, or closes it if the layer is closed.
func (l *Layer) track(c net.Conn, accepted bool) (net.Conn, error) {
	lc := &liveConn{Conn: c, l: l, accepted: accepted}
	l.liveMu.Lock()
	defer l.liveMu.Unlock()
	select {
	case <-l.done:
		c.Close()
		return nil, ErrClosed
	default:
	}
	if l.live == nil {
		l.live = make(map[*liveConn]struct{})
	}
	l.live[lc] = struct{}{}
	if accepted {
		l.handlers.Add(1)
	}
	return lc, nil
}

// WaitHandlers waits, at most d, until every connection the layer accepted
// has been closed by its user, and reports whether they all were. raft's
// NetworkTransport serves each accepted connection on a goroutine that
// closes it on return, and it answers heartbeats there, writing the term
// to the stable store: neither raft's Shutdown nor the transport's Close
// waits for those goroutines. Close the stores only once this returns
// true (after the layer's Close, which makes their reads fail).
func (l *Layer) WaitHandlers(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		l.handlers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// setBeat makes fn answer the group's shared heartbeats.
func (l *Layer) setBeat(fn func(*raft.AppendEntriesRequest) (raft.AppendEntriesResponse, error)) {
	l.hmu.Lock()
	l.beat = fn
	l.hmu.Unlock()
}

// heartbeat answers one shared heartbeat for the group. It counts as one
// of the layer's handlers while it runs (raft's handler may write the
// term to the stable store: WaitHandlers), and fails once the layer is
// closed.
func (l *Layer) heartbeat(req *raft.AppendEntriesRequest) (raft.AppendEntriesResponse, error) {
	l.hmu.Lock()
	fn := l.beat
	l.hmu.Unlock()
	if fn == nil {
		return raft.AppendEntriesResponse{}, fmt.Errorf("mux: group %s takes no shared heartbeats", l.group)
	}
	l.liveMu.Lock()
	select {
	case <-l.done:
		l.liveMu.Unlock()
		return raft.AppendEntriesResponse{}, ErrClosed
	default:
	}
	l.handlers.Add(1)
	l.liveMu.Unlock()
	defer l.handlers.Done()
	return fn(req)
}

var _ raft.StreamLayer = (*Layer)(nil)

// Accept returns the next connection dialed for this group.
func (l *Layer) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return l.track(c, true)
	case <-l.done:
		return nil, ErrClosed
	}
}

// Close removes the group from its Mux: later connections for it are
// refused, and the ones it handed out are closed.
func (l *Layer) Close() error {
	l.mux.mu.Lock()
	if l.mux.groups[l.group] == l {
		delete(l.mux.groups, l.group)
	}
	l.mux.mu.Unlock()
	l.shut()
	return nil
}

func (l *Layer) shut() {
	l.once.Do(func() {
		l.liveMu.Lock()
		close(l.done)
		live := l.live
		l.live = nil
		l.liveMu.Unlock()
		for c := range live {
			c.Conn.Close()
		}
		for {
			select {
			case c := <-l.conns:
				c.Close()
			default:
				return
			}
		}
	})
}

// Addr is the address other servers dial.
func (l *Layer) Addr() net.Addr { return l.mux.addr }

// Dial connects to the server at address for this group, through the
// Mux's DialFunc.
func (l *Layer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	select {
	case <-l.done:
		return nil, ErrClosed
	default:
	}
	if l.mux.dial == nil {
		return nil, errors.New("mux: no dialer")
	}
	c, err := l.mux.dial(string(address), l.group, timeout)
	if err != nil {
		return nil, fmt.Errorf("mux: %s: group %s: %w", address, l.group, err)
	}
	return l.track(c, false)
}
