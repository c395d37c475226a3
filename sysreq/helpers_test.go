package sysreq

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
	"github.com/nats-io/nats.go"
)

// startNode starts a server named name (with route options co, nil for
// none) and its request service (withSystemAccount).
func startNode(t testing.TB, name string, co *server.ClusterOptions) *server.Server {
	t.Helper()
	s, err := server.New(withSystemAccount(t, server.Options{ServerName: name, Host: "127.0.0.1", Port: 0, Cluster: co}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown %s: %v", name, err)
		}
	})
	startService(t, s, nil, Options{})
	return s
}

// withSystemAccount returns o with the system account SYS and its user
// sys (connectSys), and the user app of $G, whom a client without
// credentials logs in as.
func withSystemAccount(t testing.TB, o server.Options) server.Options {
	t.Helper()
	a, err := auth.New(auth.Options{
		Users:      []auth.User{{Username: "app", Password: "pw"}, {Username: "sys", Password: "pw", Account: "SYS"}},
		NoAuthUser: "app",
	})
	if err != nil {
		t.Fatal(err)
	}
	o.Auth, o.Accounts, o.SystemAccount = a, []string{"SYS"}, "SYS"
	return o
}

// startService starts the request service of s (with JetStream js, nil
// for none) in its system account, with the options of o.
func startService(t testing.TB, s *server.Server, js monitor.JetStream, o Options) {
	t.Helper()
	mon, err := monitor.New(monitor.Options{Server: s, JetStream: js, Accounts: serverAccounts{s}})
	if err != nil {
		t.Fatal(err)
	}
	o.Server, o.Monitor, o.Account = s, mon, s.Account(s.Options().SystemAccount)
	svc, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Stop)
}

// serverAccounts is the monitor's view of the accounts of a test server.
type serverAccounts struct{ s *server.Server }

func (a serverAccounts) Accounts() []string    { return a.s.AccountNames() }
func (a serverAccounts) SystemAccount() string { return a.s.Options().SystemAccount }
func (serverAccounts) ConnAccount(ci *server.ConnInfo) string {
	if ci.Account == "" {
		return monitor.GlobalAccount
	}
	return ci.Account
}

// connectSys connects to s as the system account's user sys.
func connectSys(t testing.TB, s *server.Server) *nats.Conn {
	t.Helper()
	return connect(t, s, nats.UserInfo("sys", "pw"))
}

// clusterOpts are route options of cluster "C" on a port from :0, dialing
// routes.
func clusterOpts(t testing.TB, routes ...string) *server.ClusterOptions {
	t.Helper()
	co := &server.ClusterOptions{Name: "C", Host: "127.0.0.1", ReconnectDelay: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		co.Routes = append(co.Routes, u)
	}
	return co
}

// startCluster starts three routed servers s0, s1, s2 and waits for the
// full mesh.
func startCluster(t testing.TB) []*server.Server {
	t.Helper()
	seed := startNode(t, "s0", clusterOpts(t))
	seedURL := "nats://" + seed.ClusterAddr().String()
	out := []*server.Server{seed, startNode(t, "s1", clusterOpts(t, seedURL)), startNode(t, "s2", clusterOpts(t, seedURL))}
	waitFor(t, "full mesh", func() bool {
		for _, s := range out {
			if len(s.Routes()) != 2 {
				return false
			}
		}
		return true
	})
	return out
}

func connect(t testing.TB, s *server.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), append([]nats.Option{nats.NoReconnect(), nats.Timeout(5 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// waitFor polls cond until it holds, failing after a generous deadline.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// request sends body to subj and decodes the one answer into v.
func request(t testing.TB, nc *nats.Conn, subj, body string, v any) {
	t.Helper()
	m, err := nc.Request(subj, []byte(body), 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subj, err)
	}
	if err := json.Unmarshal(m.Data, v); err != nil {
		t.Fatalf("%s: decoding %s: %v", subj, m.Data, err)
	}
}
