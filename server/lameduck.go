package server

import (
	"context"
	"time"
)

// Lame duck mode, as nats-server's (`--signal ldm=PID`): a server about to
// stop hands its clients to the rest of the cluster instead of dropping
// them all at once. LameDuck
//
//  1. stops accepting clients (the listener closes; routes stay up);
//  2. sends every client an INFO with "ldm":true, and every route its
//     INFO with "ldm":true, so that clients prefer other servers when they
//     reconnect and the other servers stop advertising this one in their
//     connect_urls;
//  3. waits grace, so that clients can finish what they are doing;
//  4. closes its clients one after another, spread over duration, so they
//     do not all reconnect elsewhere at the same moment;
//  5. shuts down (Shutdown).
//
// ctx bounds the whole: when it ends, what is left is closed at once.

// LameDuck runs lame duck mode and then Shutdown (see above). Calling it
// (or Shutdown) again waits for the first call.
func (s *Server) LameDuck(ctx context.Context, grace, duration time.Duration) error {
	s.mu.Lock()
	if s.mu.shutdown || s.lameDuck.Load() {
		s.mu.Unlock()
		return s.Shutdown(ctx)
	}
	s.lameDuck.Store(true)
	ln, wsln := s.mu.ln, s.mu.wsln
	clients := make([]*client, 0, len(s.mu.clients))
	for _, c := range s.mu.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	s.logger.Info("Entering lame duck mode, stop accepting new clients", "clients", len(clients),
		"grace", grace.String(), "duration", duration.String())
	if ln != nil {
		_ = ln.Close() // the accept loop returns; Shutdown closes it again harmlessly
	}
	if wsln != nil {
		_ = wsln.Close()
	}
	for _, c := range clients {
		c.queueProto(s.infoLine(c, false))
		c.kickWriter()
	}
	if s.cluster != nil {
		s.cluster.announceLameDuck()
	}
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if wait(grace) && len(clients) > 0 {
		step := duration / time.Duration(len(clients))
		for i, c := range clients {
			c.close(closeServerShutdown, "")
			if i < len(clients)-1 && !wait(step) {
				break
			}
		}
	}
	return s.Shutdown(ctx)
}

// LameDuckMode reports whether LameDuck has begun.
func (s *Server) LameDuckMode() bool { return s.lameDuck.Load() }

// announceLameDuck sends every route this server's INFO, now with "ldm".
func (cl *cluster) announceLameDuck() {
	line := cl.infoLine()
	cl.mu.Lock()
	routes := make([]*client, 0, len(cl.mu.routes))
	for _, c := range cl.mu.routes {
		routes = append(routes, c)
	}
	cl.mu.Unlock()
	for _, c := range routes {
		c.queueProto(line)
		c.kickWriter()
	}
}
