package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterServerEvacuate: `nats server cluster evacuate SERVER` (a
// system user's $JS.API.SERVER.EVACUATE) moves a running server's replica
// of an R2 stream to the third server with the stream's messages, the
// server stays in the meta group, and the CLI's wait for the server to
// hold nothing ends; a user of another account gets no answer, and an
// unknown server nats-server's 10044. Then `nats stream cluster evacuate`
// moves one replica of the stream.
func TestClusterServerEvacuate(t *testing.T) {
	servers := startOpsCluster(t, 3)
	byName := map[string]*Server{}
	for _, s := range servers {
		byName[s.Core().Name()] = s
	}
	metaLead := awaitMetaLeader(t, servers)
	appc, js := connectJS(t, byName[metaLead], "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var peers []string
	eventually(t, "R2 stream", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := js.CreateStream(c, jetstream.StreamConfig{Name: "E", Subjects: []string{"e.>"}, Replicas: 2}); err != nil {
			return err
		}
		var err error
		peers, _, err = streamPeers(ctx, js, "E")
		if err == nil && len(peers) != 2 {
			err = fmt.Errorf("peers %v", peers)
		}
		return err
	})
	for i := range 20 {
		if _, err := js.Publish(ctx, fmt.Sprintf("e.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	victim, spare := peers[1], ""
	for name := range byName {
		if !slices.Contains(peers, name) {
			spare = name
		}
	}
	body := []byte(fmt.Sprintf(`{"peer":%q}`, victim))
	if m, err := appc.Request("$JS.API.SERVER.EVACUATE", body, 2*time.Second); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("plain user's evacuation: %v %v, want a timeout", m, err)
	}
	sysc, err := nats.Connect(byName[metaLead].ClientURL(), nats.UserInfo("sys", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer sysc.Close()
	var m *nats.Msg
	eventually(t, "evacuation of an unknown server", 60*time.Second, func() (err error) {
		m, err = sysc.Request("$JS.API.SERVER.EVACUATE", []byte(`{"peer":"nope"}`), 5*time.Second)
		return err
	})
	var r stepDownResp
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Type != "io.nats.jetstream.api.v1.meta_server_evacuate_response" || r.Error == nil || r.Error.ErrCode != 10044 {
		t.Fatalf("evacuation of an unknown server: %s", m.Data)
	}

	// The CLI asks, then waits until the server holds no stream.
	out, err := runCLI(t, byName[metaLead], "--user", "sys", "--password", "pw", "server", "cluster", "evacuate", victim, "-f")
	if err != nil {
		t.Fatalf("server cluster evacuate %s: %v\n%s", victim, err, out)
	}
	eventually(t, "E moved off "+victim, 60*time.Second, func() error {
		got, info, err := streamPeers(ctx, js, "E")
		if err != nil {
			return err
		}
		if slices.Sort(got); slices.Contains(got, victim) || !slices.Contains(got, spare) || len(got) != 2 {
			return fmt.Errorf("E on %v", got)
		}
		if info.State.Msgs != 20 {
			return fmt.Errorf("E holds %d messages", info.State.Msgs)
		}
		return nil
	})
	// The evacuated server is still a member and answers JetStream.
	var jsz struct {
		Meta *struct {
			Size int `json:"cluster_size"`
		} `json:"meta_cluster"`
	}
	if err := getJSON(byName[victim], "/jsz", &jsz); err != nil || jsz.Meta == nil || jsz.Meta.Size != 3 {
		t.Fatalf("meta group after the evacuation: %+v %v", jsz.Meta, err)
	}
	if !strings.Contains(out, fmt.Sprintf("Requested evacuation of peer %q", victim)) {
		t.Fatalf("CLI: %s", out)
	}

	// `nats stream cluster evacuate E SERVER` (STREAM.PEER.EVACUATE.E)
	// moves one replica: the spare's goes back to the evacuated server,
	// the only one left.
	out, err = runCLI(t, byName[metaLead], "stream", "cluster", "evacuate", "E", spare, "-f")
	if err != nil {
		t.Fatalf("stream cluster evacuate E %s: %v\n%s", spare, err, out)
	}
	eventually(t, "E moved off "+spare, 60*time.Second, func() error {
		got, info, err := streamPeers(ctx, js, "E")
		if err != nil {
			return err
		}
		if slices.Contains(got, spare) || !slices.Contains(got, victim) || info.State.Msgs != 20 {
			return fmt.Errorf("E on %v with %d messages", got, info.State.Msgs)
		}
		return nil
	})
}
