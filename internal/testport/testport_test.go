package testport

import (
	"net"
	"strconv"
	"testing"
)

func TestFree(t *testing.T) {
	ports := Free(t, 5)
	seen := map[int]bool{}
	for _, p := range ports {
		if p < lowest || p >= ephemeralLow() || seen[p] {
			t.Fatalf("port %d: outside [%d, %d) or repeated in %v", p, lowest, ephemeralLow(), ports)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d not free: %v", p, err)
		}
		ln.Close()
	}
}
