// Package testport hands tests loopback ports for servers that must know
// each other's ports before they start (cluster routes), so cannot listen
// on :0 themselves.
//
// A port found free by listening on :0 lies in the kernel's ephemeral
// range: between the check and the server's bind, any outgoing connection
// on the machine (a route dialling a member not yet up, a test in another
// package) may be given it as its local port, and the bind fails with
// "address already in use". Ports from below that range are never handed
// out that way; only another test picking the same port at random could
// take one, and Free checks each is free before returning it.
package testport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// lowest is the first port Free picks from.
const lowest = 10000

// Free returns n distinct loopback ports, free when checked, below the
// ephemeral range.
func Free(t testing.TB, n int) []int {
	t.Helper()
	top := ephemeralLow()
	seen := map[int]bool{}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			t.Fatalf("testport: no %d free ports in [%d, %d)", n, lowest, top)
		}
		p := lowest + rand.IntN(top-lowest)
		if seen[p] {
			continue
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		ports = append(ports, p)
	}
	return ports
}

// ephemeralLow is the start of the kernel's ephemeral port range (Linux;
// 32768 where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > lowest+1000 {
				return lo
			}
		}
	}
	return 32768
}
