package cluster

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/jetwal/jetwal/server"
)

// The attacks of the cluster security issue, against the raft groups
// themselves: an outsider on the route port speaks hashicorp/raft's own
// protocol (produced by raft's NetworkTransport) to the meta group, with
// and without the route's credentials and TLS.

const (
	routeUser = "route"
	routePass = "s3cret-route-pass"
)

// withRouteAuth makes the cluster require route credentials.
func withRouteAuth(co *server.ClusterOptions) {
	co.Username, co.Password = routeUser, routePass
}

// attacker is a raft.StreamLayer that dials the route port the way the
// outsider chooses: tlsConf nil for plain text, and the first line sent.
type attacker struct {
	tlsConf *tls.Config
	line    string
}

func (a *attacker) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", string(address), timeout)
	if err != nil {
		return nil, err
	}
	if a.tlsConf != nil {
		cfg := a.tlsConf.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(string(address))
		tc := tls.Client(c, cfg)
		_ = c.SetDeadline(time.Now().Add(timeout))
		if err := tc.Handshake(); err != nil {
			c.Close()
			return nil, err
		}
		_ = c.SetDeadline(time.Time{})
		c = tc
	}
	if _, err := c.Write([]byte(a.line)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (a *attacker) Accept() (net.Conn, error) { return nil, errors.New("attacker: no listener") }
func (a *attacker) Close() error              { return nil }
func (a *attacker) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// preamble is a raft connection's first line for the meta group.
func preamble(user, pass string) string {
	b, _ := json.Marshal(map[string]string{"user": user, "pass": pass})
	return "RAFT _meta " + string(b) + "\r\n"
}

// rpcs sends every kind of raft RPC, with a term far ahead of the
// cluster's, to target through a fresh transport on layer; it returns the
// error of each (nil when raft answered).
func rpcs(layer raft.StreamLayer, target string, term, lastIndex uint64) map[string]error {
	out := map[string]error{}
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("intruder"), Addr: []byte("127.0.0.1:1")}
	addr := raft.ServerAddress(target)
	fresh := func() *raft.NetworkTransport {
		return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: layer, MaxPool: 1, Timeout: 5 * time.Second,
			Logger: hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off})})
	}
	tr := fresh()
	out["AppendEntries"] = tr.AppendEntries("x", addr, &raft.AppendEntriesRequest{RPCHeader: hdr, Term: term, PrevLogEntry: lastIndex, PrevLogTerm: term - 1000,
		Entries: []*raft.Log{{Index: lastIndex + 1, Term: term, Type: raft.LogCommand, Data: []byte("forged: delete streams/ORDERS")}}, LeaderCommitIndex: lastIndex + 1},
		&raft.AppendEntriesResponse{})
	tr.Close()
	tr = fresh()
	out["RequestVote"] = tr.RequestVote("x", addr, &raft.RequestVoteRequest{RPCHeader: hdr, Term: term, LastLogIndex: lastIndex + 1000, LastLogTerm: term},
		&raft.RequestVoteResponse{})
	tr.Close()
	tr = fresh()
	out["RequestPreVote"] = tr.RequestPreVote("x", addr, &raft.RequestPreVoteRequest{RPCHeader: hdr, Term: term, LastLogIndex: lastIndex + 1000, LastLogTerm: term},
		&raft.RequestPreVoteResponse{})
	tr.Close()
	tr = fresh()
	out["TimeoutNow"] = tr.TimeoutNow("x", addr, &raft.TimeoutNowRequest{RPCHeader: hdr}, &raft.TimeoutNowResponse{})
	tr.Close()
	tr = fresh()
	out["InstallSnapshot"] = tr.InstallSnapshot("x", addr, &raft.InstallSnapshotRequest{RPCHeader: hdr, SnapshotVersion: raft.SnapshotVersionMax,
		Term: term, LastLogIndex: lastIndex + 1000, LastLogTerm: term, Size: 2}, &raft.InstallSnapshotResponse{}, strings.NewReader("{}"))
	tr.Close()
	return out
}

// clusterTerms returns every server's meta term.
func clusterTerms(nodes []*testNode) []uint64 {
	var out []uint64
	for _, tn := range nodes {
		out = append(out, tn.n.metaGroup().g.r.CurrentTerm())
	}
	return out
}

// reachesRaft checks the positive control: with the route's credentials
// (and TLS when routes use it), a stale AppendEntries is answered by raft
// with the target's current term. It shows that the refusals above are
// the authentication's doing, not a broken attack.
func reachesRaft(t *testing.T, layer raft.StreamLayer, target string, want uint64) {
	t.Helper()
	tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: layer, MaxPool: 1, Timeout: 5 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off})})
	defer tr.Close()
	var resp raft.AppendEntriesResponse
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("peer"), Addr: []byte(target)}
	if err := tr.AppendEntries("x", raft.ServerAddress(target), &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 0}, &resp); err != nil {
		t.Fatalf("with the route's credentials, raft did not answer: %v", err)
	}
	if resp.Term < want || resp.Success {
		t.Fatalf("raft answered a stale AppendEntries with term %d success %v; want term >= %d and a refusal", resp.Term, resp.Success, want)
	}
}

// assertUndisturbed checks that the meta leader and every term are what
// they were before the attacks, after more than an election timeout.
func assertUndisturbed(t *testing.T, nodes []*testNode, leader int, terms []uint64) {
	t.Helper()
	time.Sleep(2 * DefaultElectionTimeout)
	if got := metaLeader(t, nodes); got != leader {
		t.Fatalf("meta leader moved from s%d to s%d after the attacks", leader+1, got+1)
	}
	if got := clusterTerms(nodes); !equalTerms(got, terms) {
		t.Fatalf("terms changed by the attacks: %v → %v", terms, got)
	}
}

func equalTerms(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHardeningRaftNeedsRouteCredentials: every raft RPC kind, with a
// term 1000 ahead and a forged entry, sent to every server's route port
// without credentials, with wrong ones and in the old preamble form, is
// refused before raft (-ERR 'Authorization Violation'); the meta leader
// and every term stay as they were. With the route's credentials the same
// transport reaches raft.
func TestHardeningRaftNeedsRouteCredentials(t *testing.T) {
	nodes := startNodesWith(t, 3, func(int) func(string, []byte) { return func(string, []byte) {} }, withRouteAuth)
	leader := metaLeader(t, nodes)
	terms := clusterTerms(nodes)
	last := nodes[leader].n.metaGroup().g.r.LastIndex()
	attacks := map[string]string{
		"no credentials":    preamble("", ""),
		"wrong password":    preamble(routeUser, "guess"),
		"wrong user":        preamble("admin", routePass),
		"old preamble form": "RAFT _meta\r\n",
		"no JSON":           "RAFT _meta user=route pass=" + routePass + "\r\n",
	}
	for name, line := range attacks {
		for _, tn := range nodes {
			for rpc, err := range rpcs(&attacker{line: line}, tn.n.Self(), terms[0]+1000, last) {
				if err == nil {
					t.Errorf("%s: %s to %s reached raft", name, rpc, tn.n.Self())
				}
			}
		}
	}
	// What the outsider reads back: nats-server's words, then the close.
	c, err := net.Dial("tcp", nodes[0].n.Self())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte(preamble("", "")))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(c)
	if string(got) != "-ERR 'Authorization Violation'\r\n" {
		t.Fatalf("unauthenticated raft connection read %q", got)
	}
	// The shared heartbeat connection ("$beats", raftstore/mux) is
	// refused the same way: its rounds could otherwise keep a follower
	// from electing, or tell it of a term.
	for name, creds := range map[string][2]string{"no credentials": {"", ""}, "wrong password": {routeUser, "guess"}} {
		b, _ := json.Marshal(map[string]string{"user": creds[0], "pass": creds[1]})
		c, err := net.Dial("tcp", nodes[1].n.Self())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("RAFT $beats " + string(b) + "\r\n\x00\x00\x00\x01\x00"))
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, _ := io.ReadAll(c)
		c.Close()
		if string(got) != "-ERR 'Authorization Violation'\r\n" {
			t.Fatalf("%s: the shared heartbeat connection read %q", name, got)
		}
	}
	assertUndisturbed(t, nodes, leader, terms)
	for _, tn := range nodes {
		reachesRaft(t, &attacker{line: preamble(routeUser, routePass)}, tn.n.Self(), terms[0])
	}
}

// TestHardeningRaftOverTLS: with route TLS (mutual, verify), the meta
// group forms and commits, so raft runs inside TLS: every connection on
// the route port must finish the handshake first. A plain-text raft
// connection, even with the right credentials, and a TLS one without a
// client certificate never reach raft; a TLS connection with a
// certificate but without credentials is refused; with both it reaches
// raft.
func TestHardeningRaftOverTLS(t *testing.T) {
	certs := testcert.New(t)
	var applied [3]chan string
	for i := range applied {
		applied[i] = make(chan string, 16)
	}
	nodes := startNodesWith(t, 3, func(i int) func(string, []byte) {
		return func(k string, _ []byte) {
			if !strings.HasPrefix(k, nodePrefix) { // the servers' announcements
				applied[i] <- k
			}
		}
	}, func(co *server.ClusterOptions) {
		withRouteAuth(co)
		co.TLSConfig = certs.ServerConfig(true)
	})
	leader := metaLeader(t, nodes)
	if err := nodes[(leader+1)%3].n.Put("over-tls", []byte("x")); err != nil {
		t.Fatalf("a follower's proposal over TLS routes: %v", err)
	}
	for i := range nodes {
		select {
		case k := <-applied[i]:
			if k != "over-tls" {
				t.Fatalf("s%d applied %q", i+1, k)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("s%d did not apply the proposal", i+1)
		}
	}
	terms := clusterTerms(nodes)
	last := nodes[leader].n.metaGroup().g.r.LastIndex()
	attacks := map[string]*attacker{
		"plain text with credentials":            {line: preamble(routeUser, routePass)},
		"TLS without a client certificate":       {tlsConf: certs.ClientConfig(false), line: preamble(routeUser, routePass)},
		"TLS with a certificate, no credentials": {tlsConf: certs.ClientConfig(true), line: preamble("", "")},
	}
	for name, a := range attacks {
		for _, tn := range nodes {
			for rpc, err := range rpcs(a, tn.n.Self(), terms[0]+1000, last) {
				if err == nil {
					t.Errorf("%s: %s to %s reached raft", name, rpc, tn.n.Self())
				}
			}
		}
	}
	// A plain-text client on the route port: no protocol line comes back
	// (the server is waiting for a TLS hello), and the connection closes.
	c, err := net.Dial("tcp", nodes[0].n.Self())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte(preamble(routeUser, routePass)))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if strings.HasPrefix(line, "-ERR") || strings.HasPrefix(line, "INFO") || strings.HasPrefix(line, "+OK") {
		t.Fatalf("plain-text connection to a TLS route port got a protocol answer %q", line)
	}
	assertUndisturbed(t, nodes, leader, terms)
	for _, tn := range nodes {
		reachesRaft(t, &attacker{tlsConf: certs.ClientConfig(true), line: preamble(routeUser, routePass)}, tn.n.Self(), terms[0])
	}
}

// TestHardeningInternalSubjectsOutOfReach: a client of the user account
// ($G here) sends a proposal where the meta leader listens: nobody
// answers, and the key it tried to delete stays. Then clients on every
// server subscribe to everything while a follower's proposal is forwarded
// to the meta leader and answered: they see none of that traffic.
func TestHardeningInternalSubjectsOutOfReach(t *testing.T) {
	var applied [3]chan string
	for i := range applied {
		applied[i] = make(chan string, 16)
	}
	nodes := startNodes(t, 3, func(i int) func(string, []byte) {
		return func(k string, _ []byte) { applied[i] <- k }
	})
	leader := metaLeader(t, nodes)
	follower := nodes[(leader+1)%3]
	waitApplied := func() {
		t.Helper()
		for i := range nodes {
			select {
			case <-applied[i]:
			case <-time.After(30 * time.Second):
				t.Fatalf("s%d did not apply the forwarded proposal", i+1)
			}
		}
	}
	if err := follower.n.Put("streams/ORDERS", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	waitApplied()
	for _, tn := range nodes {
		nc, err := nats.Connect("nats://" + tn.srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = nc.Request(proposeSubject, encodeMeta("streams/ORDERS", nil, true), 2*time.Second)
		nc.Close()
		if !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("a user's proposal: %v, want no responders", err)
		}
	}
	seen := watchEverything(t, nodes, 1024)
	time.Sleep(200 * time.Millisecond) // the subscriptions reach every server
	if err := follower.n.Put("streams/PAYMENTS", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	waitApplied()
	for i, tn := range nodes {
		if _, ok := tn.n.Get("streams/ORDERS"); !ok {
			t.Fatalf("s%d lost streams/ORDERS", i+1)
		}
	}
	for {
		select {
		case subj := <-seen:
			if strings.HasPrefix(subj, "$JWAL.") || strings.HasPrefix(subj, "_JWAL_INBOX.") {
				t.Fatalf("a user-account client received the cluster's internal subject %s", subj)
			}
		default:
			return
		}
	}
}
