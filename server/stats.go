package server

import (
	"net"
	"sort"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/server/auth"
)

// Statistics for monitoring. Message and byte counts are those of client
// PUB/HPUB (in) and of MSG/HMSG sent to clients (out); bytes are payload
// bytes, header included, as nats-server counts them. A publisher counts
// in its own read goroutine and adds to the atomics once per input chunk,
// so the publish path pays no atomic per message; each delivery adds to
// its receiver's counters.

// counters are one set of message statistics.
type counters struct {
	inMsgs, inBytes, outMsgs, outBytes atomic.Int64
}

// pendingCounts are a publisher's counts not yet added to the atomics
// (read goroutine).
type pendingCounts struct {
	inMsgs, inBytes, outMsgs, outBytes int64
}

// flushCounts adds what this client counted during the last input chunk.
func (c *client) flushCounts() {
	p := &c.counts
	if p.inMsgs == 0 && p.outMsgs == 0 {
		return
	}
	c.stats.inMsgs.Add(p.inMsgs)
	c.stats.inBytes.Add(p.inBytes)
	s := c.srv
	s.stats.inMsgs.Add(p.inMsgs)
	s.stats.inBytes.Add(p.inBytes)
	s.stats.outMsgs.Add(p.outMsgs)
	s.stats.outBytes.Add(p.outBytes)
	*p = pendingCounts{}
}

// countDelivery records one message sent to dst (a TCP client).
func (s *Server) countDelivery(d *delivery, dst *client) {
	n := int64(len(d.hdr) + len(d.data))
	dst.stats.outMsgs.Add(1)
	dst.stats.outBytes.Add(n)
	if d.pub != nil {
		d.pub.counts.outMsgs++
		d.pub.counts.outBytes += n
		return
	}
	s.stats.outMsgs.Add(1)
	s.stats.outBytes.Add(n)
}

// tlsInfo describes a completed TLS handshake (for monitoring).
type tlsInfo struct{ version, cipher string }

// clientMeta is what a client said about itself in CONNECT.
type clientMeta struct {
	name, lang, version, user string
	perms                     *auth.Permissions // as authenticated; nil = none
}

// Stats is a snapshot of server-wide counters.
type Stats struct {
	Start            time.Time
	Connections      int    // connected clients
	TotalConnections uint64 // clients accepted since start
	InMsgs, InBytes  int64  // published by clients
	OutMsgs          int64  // delivered to clients
	OutBytes         int64
	SlowConsumers    int64 // clients cut off as slow consumers
	StaleConnections int64 // clients closed for unanswered PINGs
	Subscriptions    int   // client and internal subscriptions
	SubjectCache     int   // subjects with a cached sublist result
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Start:            s.start,
		Connections:      s.NumClients(),
		TotalConnections: s.nextID.Load(),
		InMsgs:           s.stats.inMsgs.Load(),
		InBytes:          s.stats.inBytes.Load(),
		OutMsgs:          s.stats.outMsgs.Load(),
		OutBytes:         s.stats.outBytes.Load(),
		SlowConsumers:    s.slowConsumers.Load(),
		StaleConnections: s.staleConns.Load(),
		Subscriptions:    s.NumSubscriptions(),
		SubjectCache:     s.subjectCacheLen(),
	}
}

func (s *Server) subjectCacheLen() int {
	n := 0
	for _, a := range s.accounts {
		n += a.subs.CacheLen()
	}
	return n
}

// ConnInfo is a snapshot of one client connection.
type ConnInfo struct {
	CID            uint64
	IP             string
	Port           int
	Start          time.Time
	LastActivity   time.Time
	Pending        int // bytes queued for the client
	InMsgs         int64
	InBytes        int64
	OutMsgs        int64
	OutBytes       int64
	Subscriptions  int
	Name           string
	Lang           string
	Version        string
	TLSVersion     string // "" without TLS
	TLSCipher      string
	AuthorizedUser string
	Account        string // the client's account ($G without accounts)
	// Permissions are the user's, as authenticated; nil = unrestricted.
	// Shared: read only.
	Permissions *auth.Permissions
	Websocket   bool // came in on the WebSocket listener
}

// Connections returns a snapshot of every connected client, by CID.
func (s *Server) Connections() []ConnInfo {
	s.mu.Lock()
	clients := make([]*client, 0, len(s.mu.clients))
	for _, c := range s.mu.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	out := make([]ConnInfo, 0, len(clients))
	for _, c := range clients {
		out = append(out, c.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CID < out[j].CID })
	return out
}

func (c *client) info() ConnInfo {
	ci := ConnInfo{
		Websocket:    c.ws != nil,
		CID:          c.id,
		IP:           c.ip,
		Start:        c.start,
		LastActivity: time.Unix(0, c.lastIn.Load()),
		InMsgs:       c.stats.inMsgs.Load(),
		InBytes:      c.stats.inBytes.Load(),
		OutMsgs:      c.stats.outMsgs.Load(),
		OutBytes:     c.stats.outBytes.Load(),
		Account:      c.acc.Load().name,
	}
	if ta, ok := c.conn.RemoteAddr().(*net.TCPAddr); ok {
		ci.Port = ta.Port
	}
	if m := c.meta.Load(); m != nil {
		ci.Name, ci.Lang, ci.Version, ci.AuthorizedUser = m.name, m.lang, m.version, m.user
		ci.Permissions = m.perms
	}
	c.out.mu.Lock()
	ci.Pending = int(c.out.queued())
	c.out.mu.Unlock()
	c.mu.Lock()
	ci.Subscriptions = len(c.mu.subs)
	c.mu.Unlock()
	if t := c.tlsInfo.Load(); t != nil {
		ci.TLSVersion, ci.TLSCipher = t.version, t.cipher
	}
	return ci
}
