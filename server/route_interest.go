package server

import (
	"github.com/jetwal/jetwal/subject"
)

// Interest propagation. Every server keeps, per subject and queue group,
// how many of its TCP clients subscribe (cluster.imu.interest) and tells
// each route: one RS+ when a subject gains its first plain subscriber and
// one RS- when it loses its last; for a queue group an RS+ with the new
// member count (its weight) at every change and RS- at zero. A new route
// gets the whole table first. What routes announce is kept per route in
// the remote sublist (cluster.remote), which publishers match to find
// where to forward.

// interestKey is an account, a subject and queue group ("" for none).
type interestKey struct {
	acc            *Account
	subject, queue string
}

// insertSub adds a TCP client's or an internal subscription to the
// account's sublist and, in a cluster, counts it in the interest table in
// the same step (under imu), so that the table follows the sublist's order
// of changes. Internal subscriptions count like clients' (clustered
// JetStream serves its API, streams and consumers to the whole cluster).
func (a *Account) insertSub(sub *subscription) error {
	cl := a.srv.cluster
	if cl == nil || (sub.client != nil && sub.client.route != nil) {
		return a.subs.Insert(sub.subject, sub.queue, sub)
	}
	cl.imu.Lock()
	defer cl.imu.Unlock()
	if err := a.subs.Insert(sub.subject, sub.queue, sub); err != nil {
		return err
	}
	cl.noteLocked(interestKey{a, sub.subject, sub.queue}, 1)
	return nil
}

// removeSub is insertSub's reverse.
func (a *Account) removeSub(sub *subscription) error {
	cl := a.srv.cluster
	if cl == nil || (sub.client != nil && sub.client.route != nil) {
		return a.subs.Remove(sub.subject, sub.queue, sub)
	}
	cl.imu.Lock()
	defer cl.imu.Unlock()
	if err := a.subs.Remove(sub.subject, sub.queue, sub); err != nil {
		return err
	}
	cl.noteLocked(interestKey{a, sub.subject, sub.queue}, -1)
	return nil
}

// noteLocked applies delta to k's count and tells the routes when that
// changes what they know. cl.imu held.
func (cl *cluster) noteLocked(k interestKey, delta int32) {
	old := cl.imu.interest[k]
	n := old + delta
	if n <= 0 {
		delete(cl.imu.interest, k)
		if old <= 0 {
			return
		}
	} else {
		cl.imu.interest[k] = n
	}
	var line []byte
	switch {
	case n <= 0:
		line = appendRouteSub(nil, false, k.acc.wireName(), k.subject, k.queue, 0)
	case k.queue != "":
		line = appendRouteSub(nil, true, k.acc.wireName(), k.subject, k.queue, n)
	case old == 0:
		line = appendRouteSub(nil, true, k.acc.wireName(), k.subject, "", 0)
	default:
		return
	}
	if len(cl.imu.bcast) == 0 {
		return
	}
	p := string(line)
	for _, r := range cl.imu.bcast {
		r.sendProto(p)
	}
}

// sendInterest queues this server's whole interest table to a newly
// registered route and adds it to the routes told of every change, in one
// step so that no change falls between.
func (cl *cluster) sendInterest(c *client) {
	cl.imu.Lock()
	defer cl.imu.Unlock()
	var buf []byte
	for k, n := range cl.imu.interest {
		buf = appendRouteSub(buf, true, k.acc.wireName(), k.subject, k.queue, n)
		if len(buf) >= chunkSize/2 {
			c.queueProto(string(buf))
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		c.queueProto(string(buf))
	}
	cl.imu.bcast = append(cl.imu.bcast, c)
	c.kickWriter()
}

// dropBroadcast stops telling c of interest changes.
func (cl *cluster) dropBroadcast(c *client) {
	cl.imu.Lock()
	defer cl.imu.Unlock()
	for i, r := range cl.imu.bcast {
		if r == c {
			cl.imu.bcast = append(cl.imu.bcast[:i], cl.imu.bcast[i+1:]...)
			return
		}
	}
}

// remoteKey is a remote subscription's key in its route's map.
type remoteKey struct {
	acc *Account
	key string // subject, or "subject queue"
}

func makeRemoteKey(acc *Account, subj, queue []byte) remoteKey {
	if len(queue) == 0 {
		return remoteKey{acc, string(subj)}
	}
	return remoteKey{acc, string(subj) + " " + string(queue)}
}

// processRemoteSub handles RS+: interest of the route's server in one of
// our accounts. Other accounts (nats-server's $SYS, say) are ignored.
func (c *client) processRemoteSub(cmd *routeCmd) {
	acc := c.srv.accountByWire(cmd.account, nil)
	if acc == nil {
		return
	}
	if !subject.ValidFilter(bytesView(cmd.subject)) || (len(cmd.queue) > 0 && !subject.ValidLiteral(bytesView(cmd.queue))) {
		c.srv.logger.Warn("route sent an invalid subscription", "rid", c.id, "subject", string(cmd.subject), "queue", string(cmd.queue))
		c.closeFromReader(closeProtocolViolation, textInvalidSubject)
		return
	}
	if c.addRemoteSub(acc, cmd) {
		acc.interestChanged()
	}
}

// addRemoteSub records an RS+; it reports whether the interest is new.
func (c *client) addRemoteSub(acc *Account, cmd *routeCmd) bool {
	r := c.route
	key := makeRemoteKey(acc, cmd.subject, cmd.queue)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.closed {
		return false
	}
	if rs := r.mu.subs[key]; rs != nil {
		if rs.queue != "" {
			rs.weight.Store(cmd.weight)
		}
		return false
	}
	rs := &remoteSub{route: c, acc: acc, subject: string(cmd.subject), queue: string(cmd.queue)}
	rs.weight.Store(max(cmd.weight, 1))
	if err := acc.remote.Insert(rs.subject, rs.queue, rs); err != nil {
		return false // ValidFilter passed above; Insert checks the same
	}
	if r.mu.subs == nil {
		r.mu.subs = make(map[remoteKey]*remoteSub)
	}
	r.mu.subs[key] = rs
	return true
}

// processRemoteUnsub handles RS-.
func (c *client) processRemoteUnsub(cmd *routeCmd) {
	r := c.route
	acc := c.srv.accountByWire(cmd.account, nil)
	if acc == nil {
		return
	}
	key := makeRemoteKey(acc, cmd.subject, cmd.queue)
	r.mu.Lock()
	rs := r.mu.subs[key]
	if rs != nil {
		delete(r.mu.subs, key)
		_ = acc.remote.Remove(rs.subject, rs.queue, rs)
	}
	r.mu.Unlock()
	if rs != nil {
		acc.interestChanged()
	}
}

// NumRemoteSubscriptions returns the interest other servers announced, in
// every account.
func (s *Server) NumRemoteSubscriptions() int {
	if s.cluster == nil {
		return 0
	}
	n := 0
	for _, a := range s.accounts {
		n += a.remote.Count()
	}
	return n
}

// wireName is the account's name as route frames carry it.
func (a *Account) wireName() string { return string(a.wire) }
