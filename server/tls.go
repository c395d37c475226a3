package server

import (
	"crypto/tls"
	"net"
	"time"
)

// TLS. With Options.TLSConfig every client connection is TLS, in one of
// nats-server's two ways:
//
//   - INFO first (the default): INFO goes out in the clear with
//     "tls_required":true, the client starts a TLS handshake, and the
//     protocol continues over TLS.
//   - Handshake first (Options.TLSHandshakeFirst, nats.go's
//     TLSHandshakeFirst option): the client starts the handshake right
//     after connecting and INFO is the first thing sent over TLS.
//
// The handshake runs on the connection's read goroutine, bounded by
// TLSTimeout; a failed handshake closes the socket without a reply. Client
// certificates are checked by crypto/tls as TLSConfig.ClientAuth says; the
// verified chain is what tls { verify_and_map } maps to a user.

// DefaultTLSTimeout is nats-server's TLS handshake timeout.
const DefaultTLSTimeout = 2 * time.Second

// tlsStart completes the TLS setup of a new client, then serves it. It
// runs as the client's read goroutine; the writer starts only once the
// handshake is done, so nothing is written to the socket during it but the
// clear-text INFO.
func (c *client) tlsStart(raw net.Conn) {
	s := c.srv
	tc := c.conn.(*tls.Conn)
	_ = raw.SetDeadline(time.Now().Add(s.opts.TLSTimeout))
	var err error
	if !s.opts.TLSHandshakeFirst {
		info := s.infoLine(c, false)
		if c.trace {
			c.traceOut(info)
		}
		_, err = raw.Write([]byte(info))
	}
	if err == nil {
		err = tc.Handshake()
	}
	_ = raw.SetDeadline(time.Time{})
	if err != nil {
		if c.close(closeTLSHandshake, "") {
			s.logger.Error("TLS handshake error", "cid", c.id, "addr", c.addr, "err", err)
		}
		_ = raw.Close()
		s.wg.Done() // the writer that never started
		s.wg.Done()
		return
	}
	st := tc.ConnectionState()
	c.tlsInfo.Store(&tlsInfo{version: tls.VersionName(st.Version), cipher: tls.CipherSuiteName(st.CipherSuite)})
	if s.opts.TLSHandshakeFirst {
		c.queueProto(s.infoLine(c, false))
	}
	c.firstPing()
	c.startAuthTimer()
	go c.writeLoop()
	c.kickWriter()
	c.readLoop()
}
