package server

import (
	"context"
	"net"
	"sort"
	"strings"
	"time"
)

// RouteInfo is a snapshot of one registered route (for /routez).
type RouteInfo struct {
	RID          uint64
	RemoteID     string
	RemoteName   string
	RouteURL     string // the remote's route listener, nats-route://ip:port/
	DidSolicit   bool
	IsConfigured bool
	IP           string
	Port         int
	Start        time.Time
	LastActivity time.Time
	Pending      int
	InMsgs       int64
	InBytes      int64
	OutMsgs      int64
	OutBytes     int64
	Subs         []string // the remote's interest: "subject" or "subject queue", prefixed "<account>:" outside $G
}

// Routes returns every registered route, by RID.
func (s *Server) Routes() []RouteInfo { return s.routes(true) }

// RoutesBrief is Routes without each route's interest (Subs): what
// finding a peer's route, or counting its traffic, needs. Routes lists and sorts every
// subscription of every route, which with a thousand replicated streams
// made each STREAM.INFO of one cost milliseconds (its replicas are looked
// up by route).
func (s *Server) RoutesBrief() []RouteInfo { return s.routes(false) }

func (s *Server) routes(full bool) []RouteInfo {
	cl := s.cluster
	if cl == nil {
		return nil
	}
	cl.mu.Lock()
	routes := make([]*client, 0, len(cl.mu.routes))
	for _, c := range cl.mu.routes {
		routes = append(routes, c)
	}
	cl.mu.Unlock()
	out := make([]RouteInfo, 0, len(routes))
	for _, c := range routes {
		r := c.route
		ri := RouteInfo{
			RID:          c.id,
			DidSolicit:   r.solicited,
			IsConfigured: r.solicited && r.dialer.explicit,
			IP:           c.ip,
			Start:        c.start,
			LastActivity: time.Unix(0, c.lastIn.Load()),
			InMsgs:       c.stats.inMsgs.Load(),
			InBytes:      c.stats.inBytes.Load(),
			OutMsgs:      c.stats.outMsgs.Load(),
			OutBytes:     c.stats.outBytes.Load(),
		}
		if ta, ok := c.conn.RemoteAddr().(*net.TCPAddr); ok {
			ri.Port = ta.Port
		}
		c.out.mu.Lock()
		ri.Pending = int(c.out.queued())
		c.out.mu.Unlock()
		r.mu.Lock()
		ri.RemoteID, ri.RemoteName, ri.RouteURL = r.mu.remoteID, r.mu.remoteName, r.mu.routeURL
		if !full {
			r.mu.Unlock()
			out = append(out, ri)
			continue
		}
		for k := range r.mu.subs {
			if k.acc == c.srv.gacc {
				ri.Subs = append(ri.Subs, k.key)
			} else {
				ri.Subs = append(ri.Subs, k.acc.name+":"+k.key)
			}
		}
		r.mu.Unlock()
		sort.Strings(ri.Subs)
		out = append(out, ri)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RID < out[j].RID })
	return out
}

// ClusterStatus describes the cluster settings in effect (for /varz).
type ClusterStatus struct {
	Name        string
	Host        string
	Port        int
	AuthTimeout time.Duration
	URLs        []string // configured routes, without credentials
	TLSTimeout  time.Duration
	TLSRequired bool
	TLSVerify   bool
	Routes      int // registered routes
}

// Cluster returns the cluster settings and route count; ok is false
// without Options.Cluster.
func (s *Server) Cluster() (st ClusterStatus, ok bool) {
	cl := s.cluster
	if cl == nil {
		return st, false
	}
	st = ClusterStatus{
		Name:        cl.clusterName(),
		Host:        cl.opts.Host,
		Port:        cl.routePort,
		AuthTimeout: cl.opts.AuthTimeout,
		TLSTimeout:  cl.opts.TLSTimeout,
		TLSRequired: cl.opts.TLSConfig != nil,
		TLSVerify:   cl.opts.TLSConfig != nil,
		Routes:      int(cl.active.Load()),
	}
	for _, u := range cl.opts.Routes {
		v := *u
		v.User = nil
		st.URLs = append(st.URLs, strings.TrimSuffix(v.String(), "/"))
	}
	return st, true
}

// Route protocol traces, in the client traces' style.

func (c *client) traceRouteIn(cmd *routeCmd) {
	line := string(cmd.line)
	if cmd.op == rOpConnect {
		line = redactConnect(cmd.line)
	}
	c.srv.logger.Log(context.Background(), LevelTrace, "<<- ["+line+"]", "rid", c.id)
	if cmd.op == rOpMsg || cmd.op == rOpHMsg {
		c.srv.logger.Log(context.Background(), LevelTrace, "<<- MSG_PAYLOAD: ["+clip(cmd.payload)+"]", "rid", c.id)
	}
}

func (c *client) traceRouteMsgOut(d *delivery, queues []string) {
	line := appendRouteMsg(nil, c.route.headers.Load(), d.acc.wire, d.subj, d.reply, queues, d.hdr, d.data)
	if i := strings.IndexByte(string(line), '\r'); i >= 0 {
		line = line[:i]
	}
	c.srv.logger.Log(context.Background(), LevelTrace, "->> ["+string(line)+"]", "rid", c.id)
}
