package serve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/config"
)

// TestClusterPlacementUniqueTag: with jetstream { unique_tag: az: } and
// two of three servers in zone az:1, an R2 stream (added with the CLI)
// gets one server of each zone, and an R3 stream, which would need a
// third zone, gets nats-server's 10005 with "server tag not unique".
func TestClusterPlacementUniqueTag(t *testing.T) {
	tags := [][]string{{"az:1"}, {"az:1"}, {"az:2"}}
	servers := startClusterWith(t, 3, func(i int, o *Options) {
		opsOptions(t, o)
		o.Server.Tags = config.NormalizeTags(tags[i])
		o.Store.UniqueTag = "az:"
	})
	awaitMetaLeader(t, servers)
	eventually(t, "R2 across zones", 60*time.Second, func() error {
		out, err := runCLI(t, servers[0], "stream", "add", "ZONES", "--subjects", "zones", "--replicas", "2", "--defaults")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	_, js := connectJS(t, servers[1], "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eventually(t, "ZONES placement", 60*time.Second, func() error {
		peers, _, err := streamPeers(ctx, js, "ZONES")
		if err != nil {
			return err
		}
		if !slices.Contains(peers, "s3") || len(peers) != 2 {
			t.Fatalf("ZONES placed on %v, want s3 (az:2) and one of s1, s2 (az:1)", peers)
		}
		return nil
	})
	out, err := runCLI(t, servers[2], "stream", "add", "THREE", "--subjects", "three", "--replicas", "3", "--defaults")
	if want := "no suitable peers for placement, server tag not unique (10005)"; err == nil || !strings.Contains(out, want) {
		t.Fatalf("R3 with two zones: %v\n%s\nwant %q", err, out, want)
	}
}
