package server

import (
	"bufio"
	"net"
	"time"
)

// forwardInternal sends a Server.Publish message to the routes whose
// servers announced interest: once to each route with plain interest, and
// for each queue group that no local member served, to one remote member.
func (s *Server) forwardInternal(d *delivery, local *result, remote *remoteResult) {
	var f forwarding
	for _, rs := range remote.Plain {
		f.addTarget(rs.route, "")
	}
	for j, rgroup := range remote.Queues {
		name := remote.QueueNames[j]
		if hasQueue(local, name) {
			continue
		}
		if rs := pickRemote(rgroup, -1); rs != nil {
			f.addTarget(rs.route, name)
		}
	}
	acc := d.acc.wire
	for i := range f.targets {
		t := &f.targets[i]
		dst := t.route
		if dst.closed.Load() {
			continue
		}
		queued, ok := dst.queueRouteMsg(acc, d, t.queues)
		if !ok {
			continue
		}
		dst.kickWriter()
		if queued > s.opts.MaxPending {
			s.slowConsumer(dst)
		}
		dst.countRouteMsgOut(d, t.queues)
	}
}

// sniff reads the first bytes of an accepted cluster connection: one that
// starts with the handoff prefix goes to the handoff (raft), any other is
// a route. A route dialer speaks first (CONNECT, or a TLS hello), so the
// wait costs a route nothing; a connection that says nothing is closed
// after the handshake timeout, as a silent route would be.
func (cl *cluster) sniff(conn net.Conn) {
	prefix := cl.opts.HandoffPrefix
	_ = conn.SetReadDeadline(time.Now().Add(cl.opts.AuthTimeout))
	br := bufio.NewReaderSize(conn, 512)
	head, err := br.Peek(len(prefix))
	_ = conn.SetReadDeadline(time.Time{})
	if err != nil {
		_ = conn.Close()
		return
	}
	pc := &peekedConn{Conn: conn, r: br}
	if string(head) == prefix {
		cl.opts.Handoff(pc)
		return
	}
	cl.createRoute(pc, nil)
}

// peekedConn is a connection whose first bytes were read ahead.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
