package serve

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/monitor"
)

// TestClusterStreamReplicasAndPeerRemove: with the CLI on three servers,
// an R2 stream's replicas go to 3 (`stream edit --replicas 3`: the new
// replica holds the messages published before, shown by making it the
// leader) and back to 2 (the removed server drops its group); 5 is
// refused; `stream cluster peer-remove` moves a
// replica to the spare server, and is refused as nats-server refuses it
// for a server that holds no replica, or when no server is spare. An R1
// memory consumer of the R3 stream is taken, an R5 one refused.
func TestClusterStreamReplicasAndPeerRemove(t *testing.T) {
	servers := startOpsCluster(t, 3)
	byName := map[string]*Server{}
	for _, s := range servers {
		byName[s.Core().Name()] = s
	}
	awaitMetaLeader(t, servers)
	nc, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// cli runs a change with the CLI, again when it timed out (a loaded
	// machine): done tells, from a later try's output, that an earlier
	// one was applied.
	cli := func(done string, args ...string) {
		t.Helper()
		retryCLI(t, servers[1], 60*time.Second, args, done)
	}
	cli("", "stream", "add", "M", "--subjects", "m.>", "--replicas", "2", "--defaults")
	var peers []string
	eventually(t, "R2 stream", 60*time.Second, func() (err error) {
		peers, _, err = streamPeers(ctx, js, "M")
		if err == nil && len(peers) != 2 {
			err = fmt.Errorf("peers %v", peers)
		}
		return err
	})
	for i := range 20 {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := js.Publish(c, fmt.Sprintf("m.%d", i), []byte("x"))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	spare := ""
	for name := range byName {
		if !slices.Contains(peers, name) {
			spare = name
		}
	}

	// R2 -> R3: the spare server joins and catches up.
	cli("", "stream", "edit", "M", "--replicas", "3", "-f")
	eventually(t, "R3 stream", 60*time.Second, func() error {
		now, _, err := streamPeers(ctx, js, "M")
		if err == nil && len(now) != 3 {
			err = fmt.Errorf("peers %v", now)
		}
		return err
	})
	streamLedBy(t, ctx, js, servers[0], "M", spare, 20)
	c, cancelPub := context.WithTimeout(ctx, 10*time.Second)
	if _, err := js.Publish(c, "m.new", []byte("y")); err != nil {
		t.Fatal(err)
	}
	cancelPub()

	// Consumers with their own num_replicas and mem_storage, as
	// nats-server takes them (consumer_replicas.go).
	cli("", "consumer", "add", "M", "C1", "--pull", "--replicas", "1", "--memory", "--defaults")
	c, cancelInfo := context.WithTimeout(ctx, 10*time.Second)
	cons, err := js.Consumer(c, "M", "C1")
	cancelInfo()
	if err != nil || cons.CachedInfo().Config.Replicas != 1 || !cons.CachedInfo().Config.MemoryStorage {
		t.Fatalf("R1 memory consumer of an R3 stream: %v %+v", err, cons)
	}
	if out, err := runCLI(t, servers[2], "consumer", "add", "M", "C2", "--pull", "--replicas", "5", "--defaults"); err == nil || !strings.Contains(out, "consumer config replica count exceeds parent stream") {
		t.Fatalf("R5 consumer of an R3 stream: %v\n%s", err, out)
	}

	// Refusals: more servers than there are, a server that holds none,
	// and a move with no spare server.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stream", "edit", "M", "--replicas", "5", "-f"}, "no suitable peers for placement (10005)"},
		{[]string{"stream", "cluster", "peer-remove", "M", "nope", "-f"}, "peer not a member"},
		{[]string{"stream", "cluster", "peer-remove", "M", peers[0], "-f"}, "peer remap failed"},
	} {
		out, err := runCLI(t, servers[2], c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("nats %v: %v\n%s\nwant %q", c.args, err, out, c.want)
		}
	}

	// R3 -> R2: one server leaves and drops the group.
	cli("", "stream", "edit", "M", "--replicas", "2", "-f")
	var gone string
	eventually(t, "R2 again", 60*time.Second, func() error {
		now, _, err := streamPeers(ctx, js, "M")
		if err == nil && len(now) != 2 {
			return fmt.Errorf("peers %v", now)
		}
		for name := range byName {
			if err == nil && !slices.Contains(now, name) {
				gone = name
			}
		}
		return err
	})
	hasGroup := func(s *Server) (bool, error) {
		var st monitor.RaftzStatus
		if err := getJSON(s, "/raftz?acc=$G", &st); err != nil {
			return false, err
		}
		_, ok := st["$G"]["S.M"]
		return ok, nil
	}
	eventually(t, gone+" leaves the group", 60*time.Second, func() error {
		if has, err := hasGroup(byName[gone]); err != nil || has {
			return fmt.Errorf("still has S.M (%v)", err)
		}
		return nil
	})

	// peer-remove: a follower's replica moves to the spare server.
	now, _, err := streamPeers(ctx, js, "M")
	if err != nil {
		t.Fatal(err)
	}
	moved := now[1]
	cli("peer not a member", "stream", "cluster", "peer-remove", "M", moved, "-f")
	eventually(t, "replica moved from "+moved, 60*time.Second, func() error {
		now, _, err := streamPeers(ctx, js, "M")
		if err != nil {
			return err
		}
		if slices.Contains(now, moved) || !slices.Contains(now, gone) || len(now) != 2 {
			return fmt.Errorf("peers %v", now)
		}
		return nil
	})
	streamLedBy(t, ctx, js, servers[0], "M", gone, 21)

	// The API request itself, as nats-server answers it.
	// The meta leader answers it after the management requests queued
	// before it; on a loaded machine that may outlast one request timeout.
	var m *nats.Msg
	eventually(t, "peer remove of an unknown stream answered", 60*time.Second, func() error {
		var err error
		m, err = nc.Request("$JS.API.STREAM.PEER.REMOVE.NOPE", []byte(`{"peer":"s1"}`), 10*time.Second)
		return err
	})
	var r stepDownResp
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Type != "io.nats.jetstream.api.v1.stream_remove_peer_response" || r.Error == nil || r.Error.ErrCode != 10059 {
		t.Fatalf("peer remove of an unknown stream: %s", m.Data)
	}
}

// streamLedBy moves stream's leadership to leader (the CLI's step-down
// --preferred, through cliServer) and checks that it serves msgs messages
// there: what a replica added by a membership change holds.
func streamLedBy(t *testing.T, ctx context.Context, js jetstream.JetStream, cliServer *Server, stream, leader string, msgs uint64) {
	t.Helper()
	eventually(t, "step-down to "+leader, 60*time.Second, func() error {
		now, _, err := streamPeers(ctx, js, stream)
		if err != nil || now[0] == leader {
			return err
		}
		if out, err := runCLI(t, cliServer, "stream", "cluster", "step-down", stream, "--preferred", leader); err != nil {
			return fmt.Errorf("step-down to %s: %v: %s", leader, err, out)
		}
		return nil
	})
	eventually(t, stream+" led by "+leader, 60*time.Second, func() error {
		now, info, err := streamPeers(ctx, js, stream)
		if err != nil {
			return err
		}
		if now[0] != leader {
			return fmt.Errorf("led by %s", now[0])
		}
		if info.State.Msgs != msgs || info.State.LastSeq != msgs {
			t.Fatalf("on %s: %+v, want %d messages", leader, info.State, msgs)
		}
		return nil
	})
}

// TestClusterServerPeerRemove: `nats server cluster peer-remove` (a
// system user's $JS.API.SERVER.REMOVE) takes a stopped server out of the
// meta group of four, and its replica of an R3 stream (which keeps a
// quorum) moves to the spare server, which then serves the stream's
// messages; a user of another account gets
// no answer, and an unknown server nats-server's 10044.
func TestClusterServerPeerRemove(t *testing.T) {
	servers := startOpsCluster(t, 4)
	byName := map[string]*Server{}
	for _, s := range servers {
		byName[s.Core().Name()] = s
	}
	metaLead := awaitMetaLeader(t, servers)
	appc, err := nats.Connect(byName[metaLead].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer appc.Close()
	js, err := jetstream.New(appc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var peers []string
	eventually(t, "R3 stream", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := js.CreateStream(c, jetstream.StreamConfig{Name: "R", Subjects: []string{"r.>"}, Replicas: 3}); err != nil {
			return err
		}
		peers, _, err = streamPeers(ctx, js, "R")
		if err == nil && len(peers) != 3 {
			err = fmt.Errorf("peers %v", peers)
		}
		return err
	})
	for i := range 5 {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := js.Publish(c, fmt.Sprintf("r.%d", i), nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	victim, spare := "", ""
	for name := range byName {
		switch {
		case !slices.Contains(peers, name):
			spare = name
		case name != metaLead:
			victim = name
		}
	}
	body := []byte(fmt.Sprintf(`{"peer":%q}`, victim))
	if m, err := appc.Request("$JS.API.SERVER.REMOVE", body, 2*time.Second); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("plain user's server removal: %v %v, want a timeout", m, err)
	}

	sdCtx, sdCancel := context.WithTimeout(ctx, 30*time.Second)
	err = byName[victim].Shutdown(sdCtx)
	sdCancel()
	if err != nil {
		t.Fatal(err)
	}
	lead := byName[metaLead]
	sysc, err := nats.Connect(lead.ClientURL(), nats.UserInfo("sys", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer sysc.Close()
	// Retried while the meta leadership moves (a loaded machine).
	var m *nats.Msg
	eventually(t, "removal of an unknown server", 60*time.Second, func() (err error) {
		m, err = sysc.Request("$JS.API.SERVER.REMOVE", []byte(`{"peer":"nope"}`), 5*time.Second)
		return err
	})
	var r stepDownResp
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Type != "io.nats.jetstream.api.v1.meta_server_remove_response" || r.Error == nil || r.Error.ErrCode != 10044 {
		t.Fatalf("removal of an unknown server: %s", m.Data)
	}
	// A later try of one that was applied: the leader says so, or the CLI
	// no longer finds the server (the meta group's size is checked below).
	retryCLI(t, lead, 60*time.Second, []string{"--user", "sys", "--password", "pw", "server", "cluster", "peer-remove", victim, "-f"},
		"server is not a member of the cluster", "did not find a replica named")
	eventually(t, "meta group of three", 60*time.Second, func() error {
		var jsz struct {
			Meta *struct {
				Size int `json:"cluster_size"`
			} `json:"meta_cluster"`
		}
		if err := getJSON(lead, "/jsz", &jsz); err != nil {
			return err
		}
		if jsz.Meta == nil || jsz.Meta.Size != 3 {
			return fmt.Errorf("meta %+v", jsz.Meta)
		}
		return nil
	})
	eventually(t, "replica moved to "+spare, 60*time.Second, func() error {
		now, _, err := streamPeers(ctx, js, "R")
		if err == nil && (len(now) != 3 || !slices.Contains(now, spare)) {
			err = fmt.Errorf("peers %v", now)
		}
		return err
	})
	streamLedBy(t, ctx, js, lead, "R", spare, 5)
}

// TestClusterStaleReplicaRemoved: replica data a server finds at start
// for a stream the meta group does not assign to it (as a server that was
// down while its replica was taken away finds it) is deleted once the
// server has caught up with the meta group; a server restarted after such
// a change does the same (the restart itself is not in this test: a
// follower back from a few seconds down waits out raft's replication
// backoff, tens of seconds).
func TestClusterStaleReplicaRemoved(t *testing.T) {
	var stale []string
	servers := startClusterWith(t, 3, func(i int, o *Options) {
		opsOptions(t, o)
		dir := filepath.Join(o.Store.Dir, "jetstream", "_cluster", "streams", hex.EncodeToString([]byte("GONE")), "fsm")
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data"), []byte("old replica"), 0o600); err != nil {
			t.Fatal(err)
		}
		stale = append(stale, filepath.Dir(dir))
	})
	awaitMetaLeader(t, servers)
	for _, dir := range stale {
		eventually(t, "stale replica data deleted", 60*time.Second, func() error {
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s still there (%v)", dir, err)
			}
			return nil
		})
	}
}
