package serve

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
)

// ports is nats-server's ports file: the URLs of each listener.
type ports struct {
	Nats       []string `json:"nats,omitempty"`
	Monitoring []string `json:"monitoring,omitempty"`
	Cluster    []string `json:"cluster,omitempty"`
	Websocket  []string `json:"websocket,omitempty"`
}

// writePorts writes the ports file (Options.PortsFile): to a temporary
// name first, then renamed, so a reader polling for it never sees half.
func (s *Server) writePorts() error {
	path := s.opts.PortsFile
	if path == "" {
		return nil
	}
	var p ports
	p.Nats = urlsOf("nats", s.core.Options().Host, s.core.Addr())
	if a := s.MonitorAddr(); a != nil {
		p.Monitoring = urlsOf("http", s.opts.HTTPHost, a)
	}
	if a := s.core.ClusterAddr(); a != nil {
		p.Cluster = urlsOf("nats", s.opts.Server.Cluster.Host, a)
	}
	if a := s.core.WebsocketAddr(); a != nil {
		ws := s.core.Options().Websocket
		scheme := "ws"
		if ws.TLSConfig != nil {
			scheme = "wss"
		}
		p.Websocket = urlsOf(scheme, ws.Host, a)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("ports file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("ports file: %w", err)
	}
	return nil
}

// removePorts removes the ports file at shutdown.
func (s *Server) removePorts() {
	if s.opts.PortsFile != "" {
		os.Remove(s.opts.PortsFile)
	}
}

// urlsOf lists the URLs a listener on addr answers at: one per interface
// address when it listens on every address (as nats-server lists them),
// else the configured host's.
func urlsOf(scheme, host string, addr net.Addr) []string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return nil
	}
	port := strconv.Itoa(ta.Port)
	if !ta.IP.IsUnspecified() {
		return []string{scheme + "://" + net.JoinHostPort(ta.IP.String(), port)}
	}
	var out []string
	ifs, _ := net.InterfaceAddrs()
	for _, a := range ifs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			out = append(out, scheme+"://"+net.JoinHostPort(ipn.IP.String(), port))
		}
	}
	if len(out) == 0 && host != "" {
		out = append(out, scheme+"://"+net.JoinHostPort(host, port))
	}
	return out
}
