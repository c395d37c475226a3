package serve

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestProfileFlag: --profile serves Go's profiles on loopback; an
// out-of-range port is refused.
func TestProfileFlag(t *testing.T) {
	port := freePorts(t, 1)[0]
	startServe(t, "-a", "127.0.0.1", "-p", "0", "--profile", strconv.Itoa(port))
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "goroutine") {
		t.Fatalf("status %d:\n%.300s", resp.StatusCode, b)
	}
	if _, err := ParseCommandLine([]string{"--profile", "70000"}, testVersion, io.Discard); err == nil {
		t.Fatal("--profile 70000 accepted")
	}
}
