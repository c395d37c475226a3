package proc

import (
	"fmt"
	"net"
)

// FreePort returns a loopback TCP port that was free a moment ago: it listens
// on 127.0.0.1:0 and closes the listener.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("proc: pick port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("proc: close probe listener: %w", err)
	}
	return port, nil
}
