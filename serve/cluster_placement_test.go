package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/monitor"
)

// streamPeers returns the servers holding stream (its leader first), as
// its info through nc shows them, failing while a replica is not current.
func streamPeers(ctx context.Context, js jetstream.JetStream, stream string) ([]string, *jetstream.StreamInfo, error) {
	// Short: a stream whose group has no leader yet is not answered.
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := js.Stream(c, stream)
	if err != nil {
		return nil, nil, err
	}
	info := s.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return nil, nil, fmt.Errorf("no leader: %+v", info.Cluster)
	}
	peers := []string{info.Cluster.Leader}
	for _, r := range info.Cluster.Replicas {
		if !r.Current {
			return nil, nil, fmt.Errorf("replica %s not current", r.Name)
		}
		peers = append(peers, r.Name)
	}
	return peers, info, nil
}

// TestClusterPlacementTags: server_tags are shown in /varz and in the
// $SYS server block (`nats server list --json`), and the meta leader
// places a stream on servers whose tags include every tag its placement
// asks for (the CLI's --tag); too few such servers, or another cluster's
// name, get nats-server's 10005 answer.
func TestClusterPlacementTags(t *testing.T) {
	tags := [][]string{{"AZ:1", "ssd"}, {"az:2", " ssd "}, {"az:3"}}
	servers := startClusterWith(t, 3, func(i int, o *Options) {
		opsOptions(t, o)
		o.Server.Tags = config.NormalizeTags(tags[i])
	})
	awaitMetaLeader(t, servers)
	var v monitor.Varz
	if err := getJSON(servers[0], "/varz", &v); err != nil || !slices.Equal(v.Tags, []string{"az:1", "ssd"}) {
		t.Fatalf("/varz tags %q %v", v.Tags, err)
	}

	out, err := runCLI(t, servers[1], "--user", "sys", "--password", "pw", "server", "list", "3", "--json")
	if err != nil {
		t.Fatalf("server list: %v\n%s", err, out)
	}
	listed, err := serverListTags(out)
	if err != nil || !slices.Equal(listed["s2"], []string{"az:2", "ssd"}) || !slices.Equal(listed["s3"], []string{"az:3"}) {
		t.Fatalf("server list tags %v %v", listed, err)
	}

	// Two servers have "ssd": an R2 stream lands on them, once every
	// server has announced its tags.
	retryCLI(t, servers[2], 60*time.Second, []string{"stream", "add", "SSD", "--subjects", "ssd.>", "--replicas", "2", "--tag", "ssd", "--defaults"})
	nc, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eventually(t, "SSD placement", 60*time.Second, func() error {
		peers, _, err := streamPeers(ctx, js, "SSD")
		if err != nil {
			return err
		}
		if slices.Sort(peers); !slices.Equal(peers, []string{"s1", "s2"}) {
			t.Fatalf("SSD placed on %v, want s1 s2", peers)
		}
		return nil
	})

	// Refusals, as nats-server words them.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--replicas", "2", "--tag", "az:3"}, "no suitable peers for placement, tags not matched ['az:3'] (10005)"},
		{[]string{"--replicas", "1", "--tag", "nvme"}, "no suitable peers for placement, tags not matched ['nvme'] (10005)"},
		{[]string{"--replicas", "1", "--cluster", "OTHER"}, "no suitable peers for placement (10005)"},
		{[]string{"--replicas", "5"}, "no suitable peers for placement (10005)"},
	} {
		out, err := runCLI(t, servers[1], append([]string{"stream", "add", "BAD", "--subjects", "bad", "--defaults"}, c.args...)...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("stream add %v: %v\n%s\nwant %q", c.args, err, out, c.want)
		}
	}
	// An R1 stream asking for az:3 lands on s3.
	if out, err := runCLI(t, servers[0], "stream", "add", "AZ3", "--subjects", "az3", "--replicas", "1", "--tag", "AZ:3", "--defaults"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	eventually(t, "AZ3 placement", 60*time.Second, func() error {
		peers, _, err := streamPeers(ctx, js, "AZ3")
		if err == nil && !slices.Equal(peers, []string{"s3"}) {
			t.Fatalf("AZ3 placed on %v, want s3", peers)
		}
		return err
	})
}

// serverListTags reads `nats server list --json`'s tags by server name.
func serverListTags(out string) (map[string][]string, error) {
	var resp []struct {
		Server struct {
			Name string   `json:"name"`
			Tags []string `json:"tags"`
		} `json:"server"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	m := map[string][]string{}
	for _, r := range resp {
		m[r.Server.Name] = r.Server.Tags
	}
	return m, nil
}
