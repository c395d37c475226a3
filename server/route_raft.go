package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jetwal/jetwal/server/auth"
)

// Raft connections on the route port. Clustered JetStream's raft groups
// reach each other through the route listener (ClusterOptions.Raft), and
// a raft connection is held to what a route is held to before raft sees a
// byte of it:
//
//  1. With route TLS (ClusterOptions.TLSConfig), every accepted
//     connection completes the TLS handshake first, with the same
//     certificate checks as a route; a plain-text one is closed. The
//     raft traffic is then inside TLS.
//  2. Its first line is the raft preamble, which names the group and
//     carries the cluster credentials, as a route's CONNECT does:
//
//     RAFT <group> {"user":"...","pass":"..."}\r\n
//
//     The credentials are checked by the route authenticator; a
//     connection whose credentials fail is answered
//     -ERR 'Authorization Violation' and closed, as a route would be.
//
// Only then is the connection handed to ClusterOptions.Raft. Any other
// first bytes make the connection a route, which authenticates with its
// CONNECT (route_handshake.go).

// RaftPrefix starts every raft connection's preamble.
const RaftPrefix = "RAFT "

// Limits of a raft preamble: it must arrive within the route handshake
// timeout and fit this many bytes.
const (
	maxRaftPreamble = 4096
	maxRaftGroup    = 200 // the longest group name (raftstore/mux.ValidGroup)
)

// raftCredentials is the JSON of a raft preamble.
type raftCredentials struct {
	User string `json:"user,omitempty"`
	Pass string `json:"pass,omitempty"`
}

// sniff reads the first bytes of an accepted connection on the route port
// (after the TLS handshake when routes use TLS): a raft preamble makes it
// a raft connection, anything else a route. A route dialer speaks first
// (its CONNECT), so the wait costs a route nothing; a connection that says
// nothing is closed after the handshake timeout, as a silent route would be.
func (cl *cluster) sniff(raw net.Conn) {
	var conn net.Conn = raw
	var secured *tls.Conn
	if tc := cl.opts.TLSConfig; tc != nil {
		secured = tls.Server(raw, tc)
		_ = raw.SetDeadline(time.Now().Add(cl.opts.TLSTimeout))
		err := secured.Handshake()
		_ = raw.SetDeadline(time.Time{})
		if err != nil {
			cl.srv.logger.Warn("route port: TLS handshake failed", "addr", raw.RemoteAddr().String(), "err", err)
			_ = raw.Close()
			return
		}
		conn = secured
	}
	_ = conn.SetReadDeadline(time.Now().Add(cl.opts.AuthTimeout))
	br := bufio.NewReaderSize(conn, maxRaftPreamble)
	head, err := br.Peek(len(RaftPrefix))
	_ = conn.SetReadDeadline(time.Time{})
	if err != nil {
		_ = conn.Close()
		return
	}
	pc := &peekedConn{Conn: conn, r: br}
	if string(head) == RaftPrefix {
		cl.acceptRaft(pc, br)
		return
	}
	if secured != nil {
		cl.startRoute(pc, pc, nil, secured)
		return
	}
	cl.createRoute(pc, nil)
}

// acceptRaft reads and checks a raft preamble, then hands the connection
// to ClusterOptions.Raft.
func (cl *cluster) acceptRaft(conn *peekedConn, br *bufio.Reader) {
	addr := conn.RemoteAddr().String()
	_ = conn.SetReadDeadline(time.Now().Add(cl.opts.AuthTimeout))
	line, err := br.ReadSlice('\n')
	_ = conn.SetReadDeadline(time.Time{})
	if err != nil {
		cl.srv.logger.Warn("route port: incomplete raft preamble", "addr", addr, "err", err)
		_ = conn.Close()
		return
	}
	group, creds, err := parseRaftPreamble(line)
	if err != nil {
		cl.srv.logger.Warn("route port: malformed raft preamble", "addr", addr, "err", err)
		cl.refuseRaft(conn, "-ERR '"+textRouteBadConnect+"'\r\n")
		return
	}
	if !cl.raftAuthorized(creds) {
		cl.srv.logger.Warn("route port: raft connection authorization failed", "addr", addr, "group", group)
		cl.refuseRaft(conn, "-ERR '"+textAuthViolation+"'\r\n")
		return
	}
	var c net.Conn = conn
	if br.Buffered() == 0 {
		c = conn.Conn // nothing read ahead: drop the buffered reader
	}
	cl.opts.Raft(c, group)
}

// refuseRaft writes the error line and closes the connection.
func (cl *cluster) refuseRaft(conn net.Conn, line string) {
	_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = conn.Write([]byte(line))
	_ = conn.Close()
}

// parseRaftPreamble reads "RAFT <group> <json>\r\n".
func parseRaftPreamble(line []byte) (string, raftCredentials, error) {
	var creds raftCredentials
	s, ok := strings.CutPrefix(string(bytes.TrimRight(line, "\r\n")), RaftPrefix)
	if !ok {
		return "", creds, errors.New("no RAFT prefix")
	}
	group, js, _ := strings.Cut(s, " ")
	if group == "" || len(group) > maxRaftGroup {
		return "", creds, fmt.Errorf("invalid group name %.64q", group)
	}
	if err := json.Unmarshal([]byte(js), &creds); err != nil {
		return "", creds, fmt.Errorf("credentials: %w", err)
	}
	return group, creds, nil
}

// raftAuthorized checks a raft preamble's credentials with the route
// authenticator. A bcrypt check costs tens of milliseconds and every raft
// group opens connections of its own, so credentials that passed are
// remembered (as a SHA-256 of user and password, never the password).
func (cl *cluster) raftAuthorized(c raftCredentials) bool {
	if cl.auth == nil {
		return true
	}
	key := sha256.Sum256([]byte(c.User + "\x00" + c.Pass))
	if _, ok := cl.raftAuthOK.Load(key); ok {
		return true
	}
	if _, err := cl.auth.Authenticate(auth.Credentials{User: c.User, Password: c.Pass}); err != nil {
		return false
	}
	cl.raftAuthOK.Store(key, struct{}{})
	return true
}

// DialRaft opens a raft connection for group to the server whose route
// listener is at address (host:port): TCP, the route TLS handshake when
// routes use TLS, then the preamble with the credentials this server's
// routes send there. The whole exchange is bounded by timeout.
func (s *Server) DialRaft(address, group string, timeout time.Duration) (net.Conn, error) {
	cl := s.cluster
	if cl == nil {
		return nil, errors.New("server: DialRaft: no cluster configured")
	}
	if group == "" || len(group) > maxRaftGroup || strings.ContainsAny(group, " \r\n") {
		return nil, fmt.Errorf("server: DialRaft: invalid group name %q", group)
	}
	raw, err := net.DialTimeout("tcp", address, timeout)
	if err != nil {
		return nil, err
	}
	_ = raw.SetDeadline(time.Now().Add(timeout))
	var conn net.Conn = raw
	if cl.opts.TLSConfig != nil {
		host, _, _ := net.SplitHostPort(address)
		tc := tls.Client(raw, cl.clientTLS(host))
		if err := tc.Handshake(); err != nil {
			_ = raw.Close()
			return nil, fmt.Errorf("server: raft connection to %s: TLS handshake: %w", address, err)
		}
		conn = tc
	}
	user, pass := cl.credentialsFor(address)
	js, _ := json.Marshal(raftCredentials{User: user, Pass: pass}) // plain struct: cannot fail
	if _, err := conn.Write([]byte(RaftPrefix + group + " " + string(js) + "\r\n")); err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("server: raft connection to %s: send preamble for group %s: %w", address, group, err)
	}
	_ = raw.SetDeadline(time.Time{})
	return conn, nil
}

// credentialsFor returns what this server presents to the route listener
// at address: the user and password of the configured route URL naming
// that address (by host, or by one of the host's addresses), else the
// cluster's own credentials, as routes learned by gossip send.
func (cl *cluster) credentialsFor(address string) (string, string) {
	for _, u := range cl.opts.Routes {
		if u.User == nil || !sameRouteAddr(u.Host, address) {
			continue
		}
		p, _ := u.User.Password()
		return u.User.Username(), p
	}
	return cl.opts.Username, cl.opts.Password
}

// sameRouteAddr reports whether route URL host hostPort names address
// (an IP and port), resolving a host name.
func sameRouteAddr(hostPort, address string) bool {
	if hostPort == address {
		return true
	}
	h, p, err := net.SplitHostPort(hostPort)
	ah, ap, err2 := net.SplitHostPort(address)
	if err != nil || err2 != nil || p != ap {
		return false
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.Equal(net.ParseIP(ah))
	}
	ips, err := net.LookupIP(h)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if ip.Equal(net.ParseIP(ah)) {
			return true
		}
	}
	return false
}

// peekedConn is a connection whose first bytes were read ahead.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
