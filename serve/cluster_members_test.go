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

	"github.com/jetwal/jetwal/monitor"
)

// TestClusterStreamReplicasAndPeerRemove: with the CLI on three servers,
// an R2 stream's replicas go to 3 (`stream edit --replicas 3`: the new
// replica holds the messages published before, shown by making it the
// leader) and back to 2 (the removed server drops its group); 5, and
// changes to or from 1, are refused; `stream cluster peer-remove` moves a
// replica to the spare server, and is refused as nats-server refuses it
// for a server that holds no replica, or when no server is spare.
func TestClusterStreamReplicasAndPeerRemove(t *testing.T) {
	servers := startOpsCluster(t, 3)
	byName := map[string]*Server{}
	for _, s := range servers {
		byName[s.Core().Name()] = s
	}
	eventually(t, "meta leader", 60*time.Second, func() error {
		_, err := metaLeader(servers)
		return err
	})
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
	cli := func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, servers[1], args...)
		if err != nil {
			t.Fatalf("nats %v: %v\n%s", args, err, out)
		}
		return out
	}
	cli("stream", "add", "M", "--subjects", "m.>", "--replicas", "2", "--defaults")
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
	cli("stream", "edit", "M", "--replicas", "3", "-f")
	eventually(t, "R3 stream", 60*time.Second, func() error {
		now, _, err := streamPeers(ctx, js, "M")
		if err == nil && len(now) != 3 {
			err = fmt.Errorf("peers %v", now)
		}
		return err
	})
	leadsWith := func(leader string, msgs uint64) {
		t.Helper()
		eventually(t, "step-down to "+leader, 60*time.Second, func() error {
			now, _, err := streamPeers(ctx, js, "M")
			if err != nil || now[0] == leader {
				return err
			}
			if out, err := runCLI(t, servers[0], "stream", "cluster", "step-down", "M", "--preferred", leader); err != nil {
				return fmt.Errorf("step-down to %s: %v: %s", leader, err, out)
			}
			return nil
		})
		eventually(t, "M led by "+leader, 60*time.Second, func() error {
			now, info, err := streamPeers(ctx, js, "M")
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
	leadsWith(spare, 20)
	c, cancelPub := context.WithTimeout(ctx, 10*time.Second)
	if _, err := js.Publish(c, "m.new", []byte("y")); err != nil {
		t.Fatal(err)
	}
	cancelPub()

	// Refusals: more servers than there are, one replica, a server that
	// holds none, and a move with no spare server.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stream", "edit", "M", "--replicas", "5", "-f"}, "no suitable peers for placement (10005)"},
		{[]string{"stream", "edit", "M", "--replicas", "1", "-f"}, "between one replica and several"},
		{[]string{"stream", "cluster", "peer-remove", "M", "nope", "-f"}, "peer not a member"},
		{[]string{"stream", "cluster", "peer-remove", "M", peers[0], "-f"}, "peer remap failed"},
	} {
		out, err := runCLI(t, servers[2], c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("nats %v: %v\n%s\nwant %q", c.args, err, out, c.want)
		}
	}

	// R3 -> R2: one server leaves and drops the group.
	cli("stream", "edit", "M", "--replicas", "2", "-f")
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
	cli("stream", "cluster", "peer-remove", "M", moved, "-f")
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
	leadsWith(gone, 21)

	// The API request itself, as nats-server answers it.
	m, err := nc.Request("$JS.API.STREAM.PEER.REMOVE.NOPE", []byte(`{"peer":"s1"}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r stepDownResp
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Type != "io.nats.jetstream.api.v1.stream_remove_peer_response" || r.Error == nil || r.Error.ErrCode != 10059 {
		t.Fatalf("peer remove of an unknown stream: %s", m.Data)
	}
}
