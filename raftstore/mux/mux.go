// Package mux carries many raft groups between servers over one listening
// port: every replicated stream and consumer of jetwal is a raft group of
// its own, and a server should not open a port per group.
//
// A connection opened for a group starts with one preamble line, then
// carries hashicorp/raft's NetworkTransport protocol unchanged:
//
//	RAFT <group>\r\n
//
// The accepting side reads the line (bounded in length and time) and hands
// the connection to that group's Layer, a raft.StreamLayer. A connection
// for an unknown group, or with a malformed preamble, is closed; raft's
// transport retries.
package mux

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Limits of the preamble.
const (
	maxPreamble     = 256
	preambleTimeout = 5 * time.Second
	prefix          = "RAFT "
)

// ErrClosed is returned by Accept on a closed Layer and by Serve on a
// closed Mux.
var ErrClosed = errors.New("mux: closed")

// Mux dispatches incoming connections to the layers of its groups.
type Mux struct {
	addr net.Addr
	log  *slog.Logger

	mu     sync.Mutex
	groups map[string]*Layer
	lns    []net.Listener
	closed bool
}

// New returns a Mux whose layers advertise addr (the address other servers
// dial to reach this one). log may be nil.
func New(addr net.Addr, log *slog.Logger) *Mux {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Mux{addr: addr, log: log, groups: make(map[string]*Layer)}
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
	return l, nil
}

// Serve accepts connections on ln until ln or the Mux is closed.
func (m *Mux) Serve(ln net.Listener) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	m.lns = append(m.lns, ln)
	m.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			if m.isClosed() || errors.Is(err, net.ErrClosed) {
				return ErrClosed
			}
			m.log.Warn("raft mux: accept", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go m.handshake(c)
	}
}

// handshake reads the preamble of an accepted connection and dispatches it.
func (m *Mux) handshake(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(preambleTimeout))
	br := bufio.NewReaderSize(c, maxPreamble)
	line, err := br.ReadSlice('\n')
	if err != nil {
		m.log.Warn("raft mux: no preamble", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	group, ok := parsePreamble(line)
	if !ok {
		m.log.Warn("raft mux: malformed preamble", "remote", c.RemoteAddr().String(), "line", fmt.Sprintf("%.64q", line))
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if br.Buffered() > 0 {
		// The dialer sent raft bytes with the preamble: keep them.
		c = &bufferedConn{Conn: c, r: br}
	}
	m.Dispatch(c, group)
}

// Dispatch hands c, whose preamble named group, to that group's layer; the
// caller (a listener shared with other protocols) already read the
// preamble. Unknown groups are closed.
func (m *Mux) Dispatch(c net.Conn, group string) {
	m.mu.Lock()
	l := m.groups[group]
	m.mu.Unlock()
	if l == nil {
		m.log.Debug("raft mux: connection for an unknown group", "group", group, "remote", c.RemoteAddr().String())
		c.Close()
		return
	}
	select {
	case l.conns <- c:
	case <-l.done:
		c.Close()
	}
}

func parsePreamble(line []byte) (string, bool) {
	s := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
	group, ok := strings.CutPrefix(s, prefix)
	return group, ok && ValidGroup(group)
}

// ParsePreamble reports whether line (one line with its \r\n) is a raft
// preamble, and the group it names: for a listener shared with other
// protocols, which calls Dispatch.
func ParsePreamble(line []byte) (string, bool) { return parsePreamble(line) }

func (m *Mux) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Close closes the listeners given to Serve and every layer.
func (m *Mux) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	lns, groups := m.lns, m.groups
	m.groups = map[string]*Layer{}
	m.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, l := range groups {
		l.shut()
	}
	return nil
}

// Layer is one group's raft.StreamLayer.
type Layer struct {
	mux   *Mux
	group string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once

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

// Dial connects to the server at address and announces this group.
func (l *Layer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", string(address), timeout)
	if err != nil {
		return nil, err
	}
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(prefix + l.group + "\r\n")); err != nil {
		c.Close()
		return nil, fmt.Errorf("mux: %s: send preamble for group %s: %w", address, l.group, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	return l.track(c, false)
}

// bufferedConn is a connection whose first bytes were read ahead.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
