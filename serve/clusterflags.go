package serve

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/server"
)

// clusterOptions builds the route settings from the file's cluster block
// (file, nil without one) overridden by the cluster flags given (--cluster
// the route listen URL, --routes, --cluster_name, as nats-server spells
// them). nil means no clustering. The block's authorization and tls have
// no flags: routes present its user and password, and with tls every
// route is TLS both ways (see config.TLS.RouteConfig).
func clusterOptions(f Flags, given func(names ...string) bool, file *config.Cluster) (*server.ClusterOptions, error) {
	var co server.ClusterOptions
	routes := ""
	on := false
	if file != nil {
		on = true
		co.Name, co.Host, co.Port = file.Name, file.Host, file.Port
		co.Username, co.Password, co.NoAdvertise = file.Username, file.Password, file.NoAdvertise
		co.AuthTimeout = file.AuthTimeout
		if file.TLS != nil {
			tc, err := file.TLS.RouteConfig()
			if err != nil {
				return nil, fmt.Errorf("cluster: %w", err)
			}
			co.TLSConfig, co.TLSTimeout = tc, file.TLS.Timeout
		}
		routes = strings.Join(file.Routes, ",")
	}
	if given("cluster") {
		on = true
		host, port, err := parseListenURL(f.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("--cluster %q: %w", f.ClusterListen, err)
		}
		co.Host, co.Port = host, port
	}
	if given("cluster_name") {
		co.Name = f.ClusterName
	}
	if given("routes") {
		routes = f.Routes
	}
	if !on {
		if given("routes", "cluster_name") {
			return nil, fmt.Errorf("--routes and --cluster_name need --cluster (the route listen URL) or a cluster block")
		}
		return nil, nil
	}
	for _, r := range strings.Split(routes, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		u, err := url.Parse(r)
		if err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "nats-route" && u.Scheme != "tls") {
			return nil, fmt.Errorf("route %q: want nats://host:port", r)
		}
		co.Routes = append(co.Routes, u)
	}
	if err := co.Validate(); err != nil {
		return nil, err
	}
	return &co, nil
}

// parseListenURL reads nats://host:port (or host:port).
func parseListenURL(s string) (string, int, error) {
	hp := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", 0, err
		}
		hp = u.Host
	}
	host, ps, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", ps)
	}
	return host, port, nil
}
