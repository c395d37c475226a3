package jetstream

import (
	"strings"
	"testing"
	"time"
)

// TestCLIKeyValueTTL: a bucket with limit markers made by the nats CLI
// (`kv add --marker-ttl`), a key created with `kv create --ttl`: once the
// TTL passes the key is gone for `kv get`, and its history ends in the
// marker the server left (a purge, as nats-server's MaxAge marker reads).
func TestCLIKeyValueTTL(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	c.ok(args("kv", "add", "TTLS", "--marker-ttl", "2s"), "TTLS")
	c.ok(args("kv", "info", "TTLS"), "Per-Key TTL Supported: true")
	c.ok(args("kv", "create", "TTLS", "k", "v", "--ttl", "1s"))
	c.ok(args("kv", "get", "TTLS", "k"), "v")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := c.run("kv", "get", "TTLS", "k")
		if err != nil && strings.Contains(out, "key not found") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("key still there after its TTL: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.ok(args("kv", "history", "TTLS", "k"), "PURGE")
}
