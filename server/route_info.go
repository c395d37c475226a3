package server

import (
	"net"
	"slices"
	"strconv"
)

// Client INFO in a cluster carries "cluster" (the name) and
// "connect_urls": this server's client URLs, then every other server's
// (host:port, as nats-server sends them). When the set changes, every
// client that asked for async INFO (CONNECT protocol >= 1, and past its
// first PING) gets a new INFO, so clients such as nats.go know where to
// fail over to.

// clientConnectURLs returns the host:port URLs this server's clients can
// use: the listen host, or every non-loopback address of the machine when
// listening on all of them (127.0.0.1 when it has none).
func (s *Server) clientConnectURLs() []string {
	ta, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	port := strconv.Itoa(ta.Port)
	host := s.opts.Host
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{net.JoinHostPort(host, port)}
	}
	var out []string
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ipn.IP.To4() == nil && ip != nil && ip.To4() != nil {
				continue // listening on 0.0.0.0: IPv4 only
			}
			out = append(out, net.JoinHostPort(ipn.IP.String(), port))
		}
	}
	if len(out) == 0 {
		out = []string{net.JoinHostPort("127.0.0.1", port)}
	}
	return out
}

// connectURLs returns this server's URLs, then the others'. cl.mu held.
func (cl *cluster) connectURLsLocked() []string {
	out := append([]string(nil), cl.mu.ownURLs...)
	others := make([]string, 0, len(cl.mu.urls))
	for u := range cl.mu.urls {
		if !slices.Contains(out, u) {
			others = append(others, u)
		}
	}
	slices.Sort(others)
	return append(out, others...)
}

// ConnectURLs returns the client URLs this server advertises in INFO.
func (s *Server) ConnectURLs() []string {
	cl := s.cluster
	if cl == nil {
		return nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.connectURLsLocked()
}

// addURLs and removeURLs count other servers' client URLs in and out; when
// the list changes, clients are told.
func (cl *cluster) addURLs(urls []string) { cl.changeURLs(urls, 1) }

func (cl *cluster) removeURLs(urls []string) { cl.changeURLs(urls, -1) }

func (cl *cluster) changeURLs(urls []string, delta int) {
	if len(urls) == 0 {
		return
	}
	cl.mu.Lock()
	for _, u := range urls {
		n := cl.mu.urls[u] + delta
		if n <= 0 {
			delete(cl.mu.urls, u)
		} else {
			cl.mu.urls[u] = n
		}
	}
	cl.mu.Unlock()
	if cl.refreshClientInfo() {
		cl.srv.sendAsyncInfo()
	}
}

// refreshClientInfo renders the cluster part of client INFO; it reports
// whether the URL list differs from the one last rendered.
func (cl *cluster) refreshClientInfo() bool {
	cl.mu.Lock()
	urls := cl.connectURLsLocked()
	changed := !slices.Equal(urls, cl.mu.lastInfo)
	cl.mu.lastInfo = urls
	cl.mu.Unlock()
	b := []byte(`,"cluster":`)
	b = append(b, jsonString(cl.clusterName())...)
	if cl.dynamic.Load() {
		b = append(b, `,"cluster_dynamic":true`...)
	}
	ws := string(b)
	cl.wsInfo.Store(&ws)
	if len(urls) > 0 {
		b = append(b, `,"connect_urls":[`...)
		for i, u := range urls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, jsonString(u)...)
		}
		b = append(b, ']')
	}
	p := string(b)
	cl.clientInfo.Store(&p)
	return changed
}

// appendClusterInfo adds the cluster fields to a client INFO line; a
// WebSocket client gets no connect_urls (they name the TCP listeners).
func (s *Server) appendClusterInfo(b []byte, ws bool) []byte {
	if cl := s.cluster; cl != nil {
		p := cl.clientInfo.Load()
		if ws {
			p = cl.wsInfo.Load()
		}
		if p != nil {
			b = append(b, *p...)
		}
	}
	return b
}

// sendAsyncInfo sends a fresh INFO to every client that takes async INFO.
func (s *Server) sendAsyncInfo() {
	s.mu.Lock()
	if s.mu.shutdown {
		s.mu.Unlock()
		return
	}
	clients := make([]*client, 0, len(s.mu.clients))
	for _, c := range s.mu.clients {
		if c.asyncInfo.Load() {
			clients = append(clients, c)
		}
	}
	s.mu.Unlock()
	for _, c := range clients {
		c.sendProto(s.infoLine(c, false))
	}
}
