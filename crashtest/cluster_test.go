package crashtest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// clusterNode is one server process of a test cluster.
type clusterNode struct {
	name, store string
	port, route int
	args        []string
	p           *proc
}

func (n *clusterNode) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(jetwalBinary(t), n.args...)
	p := &proc{cmd: cmd, url: fmt.Sprintf("nats://127.0.0.1:%d", n.port), logs: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	n.p = p
}

// waitReady waits for the server's "Server is ready" line; a server that
// exits first fails the test with its log.
func (n *clusterNode) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(n.p.logs.String(), "Server is ready") {
		select {
		case <-n.p.done:
			t.Fatalf("%s exited during start:\n%s", n.name, n.p.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 30s:\n%s", n.name, n.p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterKill9 kills the leader of an R3 stream with SIGKILL while
// publishers and a consumer run, over and over, and restarts it. After
// every cycle: every acknowledged message is in the stream at its
// acknowledged sequence, no sequence was acknowledged for two messages, and
// no confirmed consumer ack is redelivered. At the end every replica's
// store holds the same messages. JETWAL_CLUSTER_CYCLES sets the cycles
// (make cluster-chaos runs 20; make test 2).
// startProcCluster starts three server processes of one clustered
// JetStream and connects a client that knows all of them. try retries f
// with a fresh 5 s context for up to a minute.
func startProcCluster(t *testing.T) (nodes []*clusterNode, nc *nats.Conn, js jetstream.JetStream, try func(string, func(context.Context) error)) {
	t.Helper()
	return startProcClusterWith(t, false)
}

// startProcClusterWith is startProcCluster; secured routes need
// credentials and mutual TLS (certificates made for the test), configured
// in a file as an operator would, so raft runs inside the routes' TLS.
func startProcClusterWith(t *testing.T, secured bool) (nodes []*clusterNode, nc *nats.Conn, js jetstream.JetStream, try func(string, func(context.Context) error)) {
	t.Helper()
	return startProcClusterOf(t, procCluster{size: 3, secured: secured})
}

// procCluster says how startProcClusterOf starts a cluster: its size,
// secured routes, and configuration text every server's file starts with.
type procCluster struct {
	size    int
	secured bool
	conf    string
}

// startProcClusterOf starts c.size server processes of one clustered
// JetStream, each configured by a file as an operator would, and connects a
// client that knows all of them.
func startProcClusterOf(t *testing.T, c procCluster) (nodes []*clusterNode, nc *nats.Conn, js jetstream.JetStream, try func(string, func(context.Context) error)) {
	t.Helper()
	var routes []string
	ports := freePorts(t, 2*c.size)
	for i := range c.size {
		n := &clusterNode{name: fmt.Sprintf("n%d", i+1), store: t.TempDir(), port: ports[2*i], route: ports[2*i+1]}
		nodes = append(nodes, n)
		if c.secured {
			routes = append(routes, fmt.Sprintf("nats://route:chaos-route-pass@127.0.0.1:%d", n.route))
		} else {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", n.route))
		}
	}
	var certs *testcert.Set
	if c.secured {
		certs = testcert.New(t)
	}
	for _, n := range nodes {
		n.args = []string{"serve", "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(n.port), "-sd", n.store, "-n", n.name}
		text := c.conf + fmt.Sprintf("cluster {\n  name: C\n  listen: 127.0.0.1:%d\n  routes: [ %s ]\n", n.route, strings.Join(routes, ", "))
		if c.secured {
			text += fmt.Sprintf("  authorization { user: route, password: chaos-route-pass }\n  tls { cert_file: %q, key_file: %q, ca_file: %q, verify: true }\n",
				certs.ServerCert, certs.ServerKey, certs.CAFile)
		}
		text += "}\n"
		conf := filepath.Join(t.TempDir(), "cluster.conf")
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		n.args = append(n.args, "-c", conf)
		n.start(t)
	}
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.p.url)
		n.waitReady(t)
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatal(err)
	}
	js, err = jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nodes, nc, js, retrier(t, 60*time.Second)
}

// retrier returns a function that runs f with a fresh 5 s context until it
// succeeds, failing the test after d.
func retrier(t *testing.T, d time.Duration) func(string, func(context.Context) error) {
	return func(what string, f func(ctx context.Context) error) {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := f(ctx)
			cancel()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// leaderOf returns the node leading stream.
func leaderOf(t *testing.T, nodes []*clusterNode, js jetstream.JetStream, try func(string, func(context.Context) error), stream string) *clusterNode {
	t.Helper()
	var leader string
	try("stream info", func(ctx context.Context) error {
		info, err := ledStreamInfo(ctx, js, stream)
		if err != nil {
			return err
		}
		leader = info.Cluster.Leader
		return nil
	})
	for _, n := range nodes {
		if n.name == leader {
			return n
		}
	}
	t.Fatalf("leader %q is no node", leader)
	return nil
}

// ledStreamInfo is stream's info once it has a leader.
func ledStreamInfo(ctx context.Context, js jetstream.JetStream, stream string) (*jetstream.StreamInfo, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return nil, errors.New("no leader")
	}
	return info, nil
}

func TestClusterKill9(t *testing.T) {
	cycles := envInt("JETWAL_CLUSTER_CYCLES", 2)
	nodes, nc, js, try := startProcCluster(t)
	defer nc.Close()
	try("create stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CHAOS", Subjects: []string{"chaos.>"}, Replicas: 3})
		return err
	})
	try("create consumer", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateConsumer(ctx, "CHAOS", jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 10 * time.Minute})
		return err
	})

	l := newLedger()
	acks := newAckChecker(l)
	next := 0
	for cycle := range cycles {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.publishUntil(stop, js, "chaos.m", fmt.Sprintf("c%d-w%d", cycle, w), 3*time.Second, 0)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			acks.consumeUntil(stop, js, "CHAOS", "W")
		}()
		time.Sleep(1500 * time.Millisecond)
		victim := leaderOf(t, nodes, js, try, "CHAOS")
		victim.p.kill()
		t.Logf("cycle %d: killed the leader %s", cycle, victim.name)
		time.Sleep(2500 * time.Millisecond) // a new leader, publishing on
		victim.start(t)
		time.Sleep(1500 * time.Millisecond)
		close(stop)
		wg.Wait()

		l.verify(try, js, "CHAOS")
		t.Logf("cycle %d: %d acknowledged, %d confirmed consumer acks", cycle, l.count(), acks.count())
		if f := l.failures(); f != "" {
			t.Fatalf("cycle %d: %s", cycle, f)
		}
		if l.count() <= next {
			t.Fatalf("cycle %d: nothing acknowledged", cycle)
		}
		next = l.count()
	}

	// Every replica converges on the same messages.
	last := l.last()
	// The followers apply what the leader committed within milliseconds;
	// give them a few seconds on this busy machine.
	leaderOf(t, nodes, js, try, "CHAOS")
	time.Sleep(3 * time.Second)
	nc.Close()
	for _, n := range nodes {
		n.p.stop(t)
	}
	var ref []store.Msg
	for i, n := range nodes {
		msgs := replicaMsgs(t, n)
		if uint64(len(msgs)) == 0 || msgs[len(msgs)-1].Seq < last {
			t.Fatalf("%s: replica ends before sequence %d", n.name, last)
		}
		if i == 0 {
			ref = msgs
			continue
		}
		if len(msgs) != len(ref) {
			t.Fatalf("%s holds %d messages, %s %d", n.name, len(msgs), nodes[0].name, len(ref))
		}
		for j := range msgs {
			if msgs[j].Seq != ref[j].Seq || msgs[j].Subject != ref[j].Subject || string(msgs[j].Data) != string(ref[j].Data) || msgs[j].Time != ref[j].Time {
				t.Fatalf("%s and %s differ at sequence %d", n.name, nodes[0].name, ref[j].Seq)
			}
		}
	}
}

func replicaDir(n *clusterNode) string {
	return filepath.Join(n.store, "jetstream", "_cluster", "streams", hex.EncodeToString([]byte("CHAOS")), "fsm", "store")
}

// replicaMsgs reads every message of a stopped node's replica store.
func replicaMsgs(t *testing.T, n *clusterNode) []store.Msg {
	t.Helper()
	dir := replicaDir(n)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
	st, err := wal.Open(dir, wal.Options{})
	if err != nil {
		t.Fatalf("%s: open replica: %v", n.name, err)
	}
	defer st.Close()
	var out []store.Msg
	var m store.Msg
	for seq := uint64(1); ; seq = m.Seq + 1 {
		if err := st.LoadNext("", seq, &m); err != nil {
			if errors.Is(err, store.ErrEOF) {
				return out
			}
			t.Fatalf("%s: read replica at %d: %v", n.name, seq, err)
		}
		c := m
		c.Data = append([]byte(nil), m.Data...)
		out = append(out, c)
	}
}
