package server

// ConnEvent is a client connection starting (its first CONNECT accepted,
// after authentication) or ending, for nats-server's
// $SYS.ACCOUNT.<account>.CONNECT and DISCONNECT events.
type ConnEvent struct {
	Connect bool     // false: the connection ended
	Info    ConnInfo // at the event; for an end, the final counts
	Reason  string   // why it ended, in nats-server's words ("Client Closed", ...)
}

// SetConnHook sets fn to be called for every ConnEvent of a TCP client
// (not routes); nil removes it. fn runs on the connection's own goroutine
// and must not block (queue the event and return).
func (s *Server) SetConnHook(fn func(ConnEvent)) {
	if fn == nil {
		s.connHook.Store(nil)
		return
	}
	s.connHook.Store(&fn)
}

// connEvent reports a connect (reason 0) or disconnect of c to the hook.
func (s *Server) connEvent(c *client, connect bool, reason closeReason) {
	fn := s.connHook.Load()
	if fn == nil || c.route != nil {
		return
	}
	ev := ConnEvent{Connect: connect, Info: c.info()}
	if !connect {
		ev.Reason = reason.String()
	}
	(*fn)(ev)
}
