package server

import (
	"math/rand/v2"
	"time"
)

// Keepalive. The server PINGs each client: first about 2 s after it
// connects (up to 20% later, spread like nats-server; the first PING always
// goes out), then every PingInterval, skipping a round when nothing is
// outstanding and the client sent something within the interval. When a PING would make more than MaxPingsOut unanswered, the
// client gets -ERR 'Stale Connection' and is closed. Any PONG resets the
// count.

// firstPing arms the keepalive timer for a new connection.
func (c *client) firstPing() {
	d := min(firstPingDelay, c.pingInterval())
	if j := int64(d / 5); j > 0 {
		d += time.Duration(rand.Int64N(j))
	}
	c.resetPingTimer(d)
}

// resetPingTimer (re)arms the keepalive timer to fire after d.
func (c *client) resetPingTimer(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return
	}
	if c.mu.pingTimer == nil {
		c.mu.pingTimer = time.AfterFunc(d, c.pingTimerFired)
		return
	}
	c.mu.pingTimer.Reset(d)
}

func (c *client) pingTimerFired() {
	if c.closed.Load() {
		return
	}
	interval := c.pingInterval()
	idle := time.Duration(time.Now().UnixNano() - c.lastIn.Load())
	if c.pinged.Load() && idle < interval && c.pingsOut.Load() == 0 {
		c.resetPingTimer(interval)
		return
	}
	if int(c.pingsOut.Load())+1 > c.srv.opts.MaxPingsOut {
		if c.close(closeStale, textStale) {
			c.srv.staleConns.Add(1)
			c.srv.logger.Debug("stale client connection, closing", "cid", c.id, "ip", c.ip)
		}
		return
	}
	c.pinged.Store(true)
	c.pingsOut.Add(1)
	c.sendProto("PING\r\n")
	c.resetPingTimer(interval)
}

// pingInterval is the keepalive interval: PingInterval, at most 30s for
// routes, the websocket one for WebSocket clients.
func (c *client) pingInterval() time.Duration {
	if c.route != nil {
		return c.srv.routePingInterval()
	}
	if c.ws != nil {
		return c.srv.opts.Websocket.PingInterval
	}
	return c.srv.opts.PingInterval
}
