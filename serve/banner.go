package serve

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
)

// listenAddr renders the listen address as host:port with the configured
// host (nats-server prints 0.0.0.0:4222, not [::]:4222).
func listenAddr(host string, srv *server.Server) string {
	if ta, ok := srv.Addr().(*net.TCPAddr); ok {
		return net.JoinHostPort(host, strconv.Itoa(ta.Port))
	}
	return srv.Addr().String()
}

// humanBytes prints a size like nats-server's banner ("1.0 MiB").
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// isLoopback reports whether host only accepts local connections.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// describeAuth names the ways of logging in (never a secret), for the
// startup report.
func describeAuth(a auth.Options) string {
	var parts []string
	if a.Token != "" {
		parts = append(parts, "token")
	}
	if a.Username != "" {
		parts = append(parts, "user "+strconv.Quote(a.Username))
	}
	if n := len(a.Users); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" users")
	}
	if n := len(a.Nkeys); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" nkey users")
	}
	if a.MapCerts {
		parts = append(parts, "client certificates mapped to users")
	}
	if a.NoAuthUser != "" {
		parts = append(parts, "no_auth_user "+strconv.Quote(a.NoAuthUser))
	}
	return strings.Join(parts, ", ")
}
