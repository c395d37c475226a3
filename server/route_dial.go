package server

import (
	"context"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"time"
)

// The mesh. Configured routes (ClusterOptions.Routes) are dialed and
// redialed forever, waiting ReconnectDelay after a drop and doubling the
// wait after each failure up to MaxBackoff. When a route registers, its
// INFO is passed to every other route (gossip), and a server that hears of
// one it has no route to dials it (an implicit route, tried
// 1+ConnectRetries times after each failure), so that each server needs
// only one seed and the cluster ends as a full mesh.
//
// Two servers that dial each other at once end up with two connections.
// Both sides keep the one dialed by the server with the smaller id, so
// they agree without talking; the other closes as a duplicate, and its
// dialer waits while the kept route lasts.

// routeDialer keeps connecting to one route URL.
type routeDialer struct {
	url      *url.URL
	key      string // host:port, lower case
	explicit bool   // configured (retried forever) rather than gossiped
}

// hostPortKey returns u's host:port for duplicate checks.
func hostPortKey(u *url.URL) string { return strings.ToLower(u.Host) }

// startDialer starts a dialer for u unless one runs already.
func (cl *cluster) startDialer(u *url.URL, explicit bool) {
	d := &routeDialer{url: u, key: hostPortKey(u), explicit: explicit}
	cl.mu.Lock()
	if cl.mu.closed || cl.mu.dialers[d.key] != nil {
		cl.mu.Unlock()
		return
	}
	cl.mu.dialers[d.key] = d
	cl.srv.wg.Add(1)
	cl.mu.Unlock()
	go cl.runDialer(d)
}

// sleep waits d (plus up to 10% jitter) or until the server stops; it
// reports whether the server is still running.
func (cl *cluster) sleep(d time.Duration) bool {
	if j := int64(d / 10); j > 0 {
		d += time.Duration(rand.Int64N(j))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-cl.quit:
		return false
	}
}

func (cl *cluster) runDialer(d *routeDialer) {
	defer cl.srv.wg.Done()
	defer func() {
		cl.mu.Lock()
		if cl.mu.dialers[d.key] == d {
			delete(cl.mu.dialers, d.key)
		}
		cl.mu.Unlock()
	}()
	log := cl.srv.logger
	backoff := cl.opts.ReconnectDelay
	failures := 0
	remoteID := ""
	for attempt := 0; ; attempt++ {
		// While a route to that server (or at that address) lasts, wait.
		for {
			ch, up := cl.routeUp(remoteID, d.key)
			if !up {
				break
			}
			select {
			case <-ch:
			case <-cl.quit:
				return
			}
			if !cl.sleep(cl.opts.ReconnectDelay) {
				return
			}
		}
		if cl.stopped() {
			return
		}
		conn, err := cl.dial(d.url)
		var c *client
		if err == nil {
			if c = cl.createRoute(conn, d); c == nil {
				return
			}
			select {
			case <-c.route.done:
			case <-cl.quit:
				return
			}
			outcome, id := c.route.outcome()
			switch outcome {
			case outcomeSelf:
				log.Debug("route to self, not dialing again", "url", d.url.Redacted())
				return
			case outcomeRegistered, outcomeDuplicate:
				remoteID, failures, backoff = id, 0, cl.opts.ReconnectDelay
				if !cl.sleep(backoff) {
					return
				}
				continue
			}
		}
		failures++
		if err != nil {
			if d.explicit && (failures == 1 || failures%10 == 0) {
				log.Error("error trying to connect to route", "url", d.url.Redacted(), "attempt", failures, "err", err)
			} else {
				log.Debug("error trying to connect to route", "url", d.url.Redacted(), "attempt", failures, "err", err)
			}
		}
		if !d.explicit && failures > cl.opts.ConnectRetries {
			return
		}
		if !cl.sleep(backoff) {
			return
		}
		backoff = min(2*backoff, cl.opts.MaxBackoff)
	}
}

// dial connects to a route URL, giving up when the server stops.
func (cl *cluster) dial(u *url.URL) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultRouteDialTimeout)
	defer cancel()
	go func() {
		select {
		case <-cl.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	var dialer net.Dialer
	return dialer.DialContext(ctx, "tcp", u.Host)
}

// routeUp reports whether a route to server id (or whose route address is
// key) is registered, and returns a channel closed at the next change.
func (cl *cluster) routeUp(id, key string) (<-chan struct{}, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.mu.closed {
		return cl.mu.changed, false
	}
	if id != "" && cl.mu.routes[id] != nil {
		return cl.mu.changed, true
	}
	for _, c := range cl.mu.routes {
		c.route.mu.Lock()
		u := c.route.mu.routeURL
		c.route.mu.Unlock()
		if pu, err := url.Parse(u); err == nil && hostPortKey(pu) == key {
			return cl.mu.changed, true
		}
	}
	return cl.mu.changed, false
}

// register makes c the route to its server, unless a connection that wins
// the tie-break is registered already. It then sends c this server's
// interest, tells the other routes about c's server (gossip), and adds c's
// client URLs to the INFO clients get.
func (cl *cluster) register(c *client) bool {
	r := c.route
	r.mu.Lock()
	id := r.mu.remoteID
	info := r.mu.info
	urls := r.mu.connectURLs
	r.mu.Unlock()

	cl.mu.Lock()
	if cl.mu.closed {
		cl.mu.Unlock()
		return false
	}
	old := cl.mu.routes[id]
	if old != nil && !cl.prefer(c, old) {
		cl.mu.Unlock()
		r.mu.Lock()
		r.mu.outcome = outcomeDuplicate
		r.mu.Unlock()
		cl.srv.logger.Debug("duplicate route, closing", "rid", c.id, "remote", id)
		return false
	}
	if old != nil {
		delete(cl.mu.routes, id)
		old.route.mu.Lock()
		old.route.mu.outcome = outcomeDuplicate
		old.route.mu.Unlock()
	}
	cl.mu.routes[id] = c
	r.mu.Lock()
	r.mu.outcome = outcomeRegistered
	r.mu.Unlock()
	r.registered.Store(true)
	others := make([]*client, 0, len(cl.mu.routes))
	for _, o := range cl.mu.routes {
		if o != c {
			others = append(others, o)
		}
	}
	cl.noteChangedLocked()
	cl.mu.Unlock()
	if old != nil {
		// Its URLs and broadcast slot go to the new connection; routeClosed
		// sees it is no longer registered.
		cl.dropBroadcast(old)
		if !cl.opts.NoAdvertise {
			old.route.mu.Lock()
			cl.removeURLs(old.route.mu.connectURLs)
			old.route.mu.connectURLs = nil
			old.route.mu.Unlock()
		}
		old.close(closeClientClosed, "")
		cl.active.Add(-1)
	}
	cl.active.Add(1)
	cl.srv.logger.Info("route connection registered", "rid", c.id, "remote", id, "name", info.Name, "solicited", r.solicited)
	cl.sendInterest(c)
	if !r.solicited || r.dialer.explicit {
		line := gossipLine(info)
		for _, o := range others {
			o.sendProto(line)
		}
	}
	if !cl.opts.NoAdvertise {
		cl.addURLs(urls)
	}
	return true
}

// prefer reports whether route connection a should replace b, both to the
// same server: the one dialed by the server with the smaller id wins, on
// both sides; between two dialed by the same server the registered one
// stays.
func (cl *cluster) prefer(a, b *client) bool {
	dialedBy := func(c *client) string {
		if c.route.solicited {
			return cl.srv.id
		}
		c.route.mu.Lock()
		defer c.route.mu.Unlock()
		return c.route.mu.remoteID
	}
	da, db := dialedBy(a), dialedBy(b)
	return da != db && da < db
}

// gossiped handles an INFO about another server: dial it unless a route to
// it exists or is configured.
func (cl *cluster) gossiped(info *routeInfoJSON) {
	if info.ID == cl.srv.id || info.RouteAccount != "" {
		return
	}
	if info.Cluster != "" && info.Cluster != cl.clusterName() {
		return
	}
	u, err := routeURLFromInfo(info)
	if err != nil {
		cl.srv.logger.Debug("ignoring gossip", "err", err)
		return
	}
	cl.mu.Lock()
	_, known := cl.mu.routes[info.ID]
	cl.mu.Unlock()
	if known {
		return
	}
	cl.srv.logger.Debug("learned of a route by gossip", "remote", info.ID, "url", u.Redacted())
	cl.startDialer(u, false)
}
