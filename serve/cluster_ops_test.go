package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/internal/testbin"
	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server/auth"
)

// startOpsCluster starts n servers of one clustered JetStream with an HTTP
// monitor each and a system account SYS: user sys (password pw) is in it,
// user app in $G, and a client without credentials logs in as app.
func startOpsCluster(t *testing.T, n int) []*Server {
	t.Helper()
	return startClusterWith(t, n, func(_ int, o *Options) { opsOptions(t, o) })
}

// opsOptions amends a server's options as startOpsCluster's.
func opsOptions(t *testing.T, o *Options) {
	t.Helper()
	a, err := auth.New(auth.Options{
		Users:      []auth.User{{Username: "app", Password: "pw"}, {Username: "sys", Password: "pw", Account: "SYS"}},
		NoAuthUser: "app",
	})
	if err != nil {
		t.Fatal(err)
	}
	o.Server.Auth = a
	o.Accounts, o.SystemAccount = []config.Account{{Name: "SYS"}}, "SYS"
	o.HTTPPort = -1
}

// eventually retries f until it succeeds or d has passed (elections on a
// loaded machine take their time).
func eventually(t *testing.T, what string, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func getJSON(s *Server, path string, v any) error {
	resp, err := http.Get("http://" + s.MonitorAddr().String() + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return json.Unmarshal(b, v)
}

// awaitMetaLeader waits until every server names the same meta leader and
// returns its name.
func awaitMetaLeader(t *testing.T, servers []*Server) string {
	t.Helper()
	var leader string
	eventually(t, "meta leader", 60*time.Second, func() (err error) {
		leader, err = metaLeader(servers)
		return err
	})
	return leader
}

// metaLeaders returns the meta leader every server's /jsz names, failing
// while they disagree or there is none.
func metaLeader(servers []*Server) (string, error) {
	leader := ""
	for _, s := range servers {
		var jsz struct {
			Meta *struct {
				Leader string `json:"leader"`
			} `json:"meta_cluster"`
		}
		if err := getJSON(s, "/jsz", &jsz); err != nil {
			return "", err
		}
		if jsz.Meta == nil || jsz.Meta.Leader == "" {
			return "", fmt.Errorf("%s: no meta leader", s.Core().Name())
		}
		if leader != "" && jsz.Meta.Leader != leader {
			return "", fmt.Errorf("servers disagree: %s and %s", leader, jsz.Meta.Leader)
		}
		leader = jsz.Meta.Leader
	}
	return leader, nil
}

// runCLI runs the pinned nats CLI against s.
func runCLI(t *testing.T, s *Server, args ...string) (string, error) {
	t.Helper()
	return natsCLI(t, s.ClientURL(), args...)
}

// natsCLI runs the pinned nats CLI against the server at url, with a home
// directory of its own (no saved contexts).
func natsCLI(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, testbin.NatsCLI(t), append([]string{"-s", url, "--timeout", "5s"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// retryCLI runs the pinned nats CLI against s until it succeeds, or
// fails with output containing one of done (a later try of a change
// already applied says so), or d has passed (then the test fails).
func retryCLI(t *testing.T, s *Server, d time.Duration, args []string, done ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("nats %v", args), d, func() error {
		out, err := runCLI(t, s, args...)
		if err != nil && !slices.ContainsFunc(done, func(w string) bool { return w != "" && strings.Contains(out, w) }) {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})
}

type stepDownResp struct {
	Type  string `json:"type"`
	Error *struct {
		Code    int    `json:"code"`
		ErrCode int    `json:"err_code"`
		Desc    string `json:"description"`
	} `json:"error"`
	Success bool `json:"success"`
}

// TestClusterStepDownsAndRaftz: on three servers, the meta leader steps
// down when a system user asks (the CLI's `server cluster step-down`, and
// a request naming the preferred server), a plain user's request goes
// unanswered as with nats-server; a consumer's step-down moves its
// stream's leadership, and a stream's step-down moves it to the preferred
// server (the CLI's --preferred) or refuses as nats-server does; /raftz and the RAFTZ request list the meta group
// and the stream's group with their leaders.
func TestClusterStepDownsAndRaftz(t *testing.T) {
	servers := startOpsCluster(t, 3)
	byName := map[string]*Server{}
	for _, s := range servers {
		byName[s.Core().Name()] = s
	}
	var leader string
	eventually(t, "meta leader", 60*time.Second, func() (err error) {
		leader, err = metaLeader(servers)
		return err
	})

	sysc, err := nats.Connect(servers[0].ClientURL(), nats.UserInfo("sys", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer sysc.Close()
	appc, err := nats.Connect(servers[1].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer appc.Close()

	// A plain user's request is left unanswered, and nothing moves.
	if _, err := appc.Request("$JS.API.META.LEADER.STEPDOWN", nil, 2*time.Second); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("plain user's meta step-down: %v, want a timeout", err)
	}
	if out, err := runCLI(t, servers[1], "server", "cluster", "step-down"); err == nil {
		t.Fatalf("plain user's CLI step-down succeeded:\n%s", out)
	}
	if now, err := metaLeader(servers); err != nil || now != leader {
		t.Fatalf("meta leader after a plain user's request: %q %v, want %q", now, err, leader)
	}

	// The CLI as a system user.
	out, err := runCLI(t, servers[2], "--user", "sys", "--password", "pw", "server", "cluster", "step-down")
	if err != nil || !strings.Contains(out, "New leader elected") {
		t.Fatalf("server cluster step-down: %v\n%s", err, out)
	}
	eventually(t, "meta leader moved", 60*time.Second, func() error {
		now, err := metaLeader(servers)
		if err == nil && now == leader {
			err = fmt.Errorf("still %s", now)
		}
		leader = now
		return err
	})

	// Preferred servers: the leader itself, an unknown one, another one.
	ask := func(body string) stepDownResp {
		t.Helper()
		var r stepDownResp
		eventually(t, "meta step-down "+body, 60*time.Second, func() error {
			m, err := sysc.Request("$JS.API.META.LEADER.STEPDOWN", []byte(body), 10*time.Second)
			if err != nil {
				return err
			}
			r = stepDownResp{}
			return json.Unmarshal(m.Data, &r)
		})
		if r.Type != "io.nats.jetstream.api.v1.meta_leader_stepdown_response" {
			t.Fatalf("response type %q", r.Type)
		}
		return r
	}
	for _, body := range []string{fmt.Sprintf(`{"placement":{"preferred":%q}}`, leader), `{"placement":{"preferred":"nope"}}`, `{"placement":{"tags":["ssd"]}}`} {
		if r := ask(body); r.Error == nil || r.Error.ErrCode != 10005 || r.Error.Code != 400 {
			t.Fatalf("%s: %+v", body, r)
		}
	}
	target := ""
	for name := range byName {
		if name != leader {
			target = name
			break
		}
	}
	if r := ask(fmt.Sprintf(`{"placement":{"preferred":%q}}`, target)); !r.Success || r.Error != nil {
		t.Fatalf("step-down to %s: %+v", target, r)
	}
	eventually(t, "meta leader "+target, 60*time.Second, func() error {
		now, err := metaLeader(servers)
		if err == nil && now != target {
			err = fmt.Errorf("leader %s", now)
		}
		return err
	})
	leader = target

	// A consumer's step-down moves its stream's leadership.
	js, err := jetstream.New(appc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var streamLeader string
	eventually(t, "R3 stream and consumer", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := js.CreateStream(c, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3}); err != nil {
			return err
		}
		cons, err := js.CreateOrUpdateConsumer(c, "ORDERS", jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			return err
		}
		ci, err := cons.Info(c)
		if err != nil {
			return err
		}
		if ci.Cluster == nil || ci.Cluster.Leader == "" || len(ci.Cluster.Replicas) != 2 {
			return fmt.Errorf("consumer cluster %+v", ci.Cluster)
		}
		streamLeader = ci.Cluster.Leader
		return nil
	})
	out, err = runCLI(t, servers[0], "consumer", "cluster", "step-down", "ORDERS", "C")
	if err != nil {
		t.Fatalf("consumer cluster step-down: %v\n%s", err, out)
	}
	eventually(t, "consumer leader moved", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		cons, err := js.Consumer(c, "ORDERS", "C")
		if err != nil {
			return err
		}
		ci, err := cons.Info(c)
		if err != nil {
			return err
		}
		if ci.Cluster == nil || ci.Cluster.Leader == "" || ci.Cluster.Leader == streamLeader {
			return fmt.Errorf("consumer cluster %+v, was led by %s", ci.Cluster, streamLeader)
		}
		s, err := js.Stream(c, "ORDERS")
		if err != nil {
			return err
		}
		if s.CachedInfo().Cluster.Leader != ci.Cluster.Leader {
			return fmt.Errorf("stream led by %s, consumer by %s", s.CachedInfo().Cluster.Leader, ci.Cluster.Leader)
		}
		streamLeader = ci.Cluster.Leader
		return nil
	})
	// A stream's step-down with a preferred server: refused for the
	// leader itself, an unknown server or tags no server has; the CLI's
	// --preferred moves the leadership there.
	streamStepDown := func(body string) stepDownResp {
		t.Helper()
		m, err := appc.Request("$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", []byte(body), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var r stepDownResp
		if err := json.Unmarshal(m.Data, &r); err != nil || r.Type != "io.nats.jetstream.api.v1.stream_leader_stepdown_response" {
			t.Fatalf("stream step-down %s: %s", body, m.Data)
		}
		return r
	}
	for _, body := range []string{fmt.Sprintf(`{"placement":{"preferred":%q}}`, streamLeader), `{"placement":{"preferred":"nope"}}`, `{"placement":{"tags":["ssd"]}}`} {
		if r := streamStepDown(body); r.Error == nil || r.Error.ErrCode != 10005 || r.Error.Code != 400 {
			t.Fatalf("stream step-down %s: %+v", body, r)
		}
	}
	if r := streamStepDown(`{"placement":`); r.Error == nil || r.Error.ErrCode != 10025 {
		t.Fatalf("stream step-down with bad JSON: %+v", r)
	}
	for _, preferred := range []string{"s1", "s2", "s3"} {
		if preferred == streamLeader {
			continue
		}
		out, err = runCLI(t, servers[0], "stream", "cluster", "step-down", "ORDERS", "--preferred", preferred)
		if err != nil {
			t.Fatalf("stream cluster step-down --preferred %s: %v\n%s", preferred, err, out)
		}
		eventually(t, "stream leader "+preferred, 60*time.Second, func() error {
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			s, err := js.Stream(c, "ORDERS")
			if err != nil {
				return err
			}
			if l := s.CachedInfo().Cluster.Leader; l != preferred {
				return fmt.Errorf("stream led by %s, want %s", l, preferred)
			}
			return nil
		})
		streamLeader = preferred
	}

	// An unknown consumer.
	m, err := appc.Request("$JS.API.CONSUMER.LEADER.STEPDOWN.ORDERS.NOPE", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r stepDownResp
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Error == nil || r.Error.ErrCode != 10014 || r.Type != "io.nats.jetstream.api.v1.consumer_leader_stepdown_response" {
		t.Fatalf("step-down of an unknown consumer: %s", m.Data)
	}

	// /raftz on every server: the meta group in SYS, the stream's in $G.
	for _, s := range servers {
		name := s.Core().Name()
		eventually(t, name+" /raftz", 60*time.Second, func() error {
			var meta, streams monitor.RaftzStatus
			if err := getJSON(s, "/raftz", &meta); err != nil {
				return err
			}
			if err := getJSON(s, "/raftz?acc=$G", &streams); err != nil {
				return err
			}
			return checkRaftz(meta, streams, name, leader, streamLeader)
		})
	}
	// RAFTZ over NATS: one answer per server.
	eventually(t, "RAFTZ", 60*time.Second, func() error {
		for _, acc := range []string{"", "$G"} {
			inbox := nats.NewInbox()
			sub, err := sysc.SubscribeSync(inbox)
			if err != nil {
				return err
			}
			body := "{}"
			if acc != "" {
				body = fmt.Sprintf(`{"account":%q}`, acc)
			}
			if err := sysc.PublishRequest("$SYS.REQ.SERVER.PING.RAFTZ", inbox, []byte(body)); err != nil {
				return err
			}
			seen := map[string]bool{}
			for len(seen) < 3 {
				m, err := sub.NextMsg(10 * time.Second)
				if err != nil {
					sub.Unsubscribe()
					return fmt.Errorf("RAFTZ %s: %d answers: %v", acc, len(seen), err)
				}
				var resp struct {
					Server struct {
						Name string `json:"name"`
					} `json:"server"`
					Data monitor.RaftzStatus `json:"data"`
				}
				if err := json.Unmarshal(m.Data, &resp); err != nil {
					return err
				}
				seen[resp.Server.Name] = true
				if acc == "" {
					g, ok := resp.Data["SYS"]["_meta"]
					if !ok || g.LeaderName != leader || len(g.Peers) != 2 {
						return fmt.Errorf("%s: RAFTZ %s", resp.Server.Name, m.Data)
					}
				} else if g, ok := resp.Data["$G"]["S.ORDERS"]; !ok || g.LeaderName != streamLeader {
					return fmt.Errorf("%s: RAFTZ $G %s", resp.Server.Name, m.Data)
				}
			}
			sub.Unsubscribe()
		}
		return nil
	})
}

// checkRaftz checks one server's /raftz (meta: the system account's; streams:
// ?acc=$G).
func checkRaftz(meta, streams monitor.RaftzStatus, self, metaLeader, streamLeader string) error {
	if len(meta) != 1 || len(meta["SYS"]) != 1 {
		return fmt.Errorf("/raftz: %+v", meta)
	}
	m := meta["SYS"]["_meta"]
	want := "FOLLOWER"
	if self == metaLeader {
		want = "LEADER"
	}
	if m.LeaderName != metaLeader || m.State != want || !m.SystemAcc || m.Size != 3 || m.QuorumNeeded != 2 ||
		len(m.Peers) != 2 || m.Term == 0 || m.Committed == 0 || m.Applied == 0 || m.PIndex < m.Committed {
		return fmt.Errorf("meta group: %+v", m)
	}
	for id, p := range m.Peers {
		if id == m.ID || p.Name == "" || p.Name == self || !p.Known {
			return fmt.Errorf("meta peer %s: %+v", id, p)
		}
	}
	g, ok := streams["$G"]["S.ORDERS"]
	if len(streams) != 1 || len(streams["$G"]) != 1 || !ok {
		return fmt.Errorf("/raftz?acc=$G: %+v", streams)
	}
	want = "FOLLOWER"
	if self == streamLeader {
		want = "LEADER"
	}
	if g.LeaderName != streamLeader || g.State != want || g.SystemAcc || g.Stream != "ORDERS" || g.Size != 3 || len(g.Peers) != 2 {
		return fmt.Errorf("stream group: %+v", g)
	}
	return nil
}
