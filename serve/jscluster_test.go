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
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/internal/testport"
)

// member is one `jetwal serve` of a test cluster, stoppable mid-test.
type member struct {
	name, route string
	args        []string
	run         *serveRun
	stop        func()
}

// freePorts returns n free loopback ports for servers that must know each
// other's before they start (see package testport).
func freePorts(t *testing.T, n int) []int { return testport.Free(t, n) }

// start runs the member's server until stop or the test's end.
func (m *member) start(t *testing.T) {
	t.Helper()
	m.run, m.stop = runServer(t, m.args)
	t.Cleanup(m.stop)
}

// startJSCluster starts n servers of one clustered JetStream.
func startJSCluster(t *testing.T, n int) []*member {
	t.Helper()
	ports := freePorts(t, n)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	ms := make([]*member, n)
	for i := range ms {
		ms[i] = &member{name: fmt.Sprintf("n%d", i+1), route: fmt.Sprintf("127.0.0.1:%d", ports[i])}
		ms[i].args = []string{"-js", "-a", "127.0.0.1", "-p", "0", "-n", ms[i].name, "-sd", t.TempDir(),
			"--cluster_name", "C", "--cluster", routes[i], "--routes", strings.Join(routes, ",")}
		ms[i].start(t)
	}
	return ms
}

func connectAddrJS(t *testing.T, addr string) (*nats.Conn, njs.JetStream) {
	t.Helper()
	nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// TestClusteredJetStream: three servers, one R3 stream. Publishing through
// any server is acknowledged with one sequence order; stream info names a
// leader and two current replicas; step-down moves the leadership; when
// the leader's server stops, another takes over and the sequences go on;
// every acknowledged message is served, the same, by every leader in turn.
func TestClusteredJetStreamFromFlags(t *testing.T) {
	ms := startJSCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, js1 := connectAddrJS(t, ms[0].run.addr)
	createOrdersR3(t, ctx, js1)
	var jss []njs.JetStream
	for _, m := range ms {
		_, js := connectAddrJS(t, m.run.addr)
		jss = append(jss, js)
	}
	want := map[uint64]string{}
	publish := func(js njs.JetStream, body string) {
		t.Helper()
		var ack *njs.PubAck
		eventually(t, "publish "+body, 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			var err error
			ack, err = js.Publish(ctx, "orders.new", []byte(body), njs.WithMsgID(body))
			return err
		})
		if old, dup := want[ack.Sequence]; dup && old != body {
			t.Fatalf("sequence %d acknowledged for %q and %q", ack.Sequence, old, body)
		}
		want[ack.Sequence] = body
	}
	for i := range 60 {
		publish(jss[i%3], fmt.Sprintf("m%d", i))
	}
	if len(want) != 60 {
		t.Fatalf("%d distinct sequences for 60 messages", len(want))
	}
	info := streamInfo(t, ctx, js1)
	if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("cluster info %+v", info.Cluster)
	}
	for _, p := range info.Cluster.Replicas {
		if !p.Current {
			t.Errorf("replica %s not current", p.Name)
		}
	}
	if info.State.Msgs != 60 || info.State.LastSeq != 60 {
		t.Fatalf("state %+v", info.State)
	}
	// The followers report their progress: caught up, recently heard from.
	eventually(t, "followers caught up", 30*time.Second, func() error {
		for _, p := range streamInfo(t, ctx, js1).Cluster.Replicas {
			if p.Lag != 0 || p.Active <= 0 || p.Active > 5*time.Second {
				return fmt.Errorf("replica %s lag %d active %v", p.Name, p.Lag, p.Active)
			}
		}
		return nil
	})

	// Step down: another server leads.
	first := info.Cluster.Leader
	nc1 := connectNC(t, ms[0].run.addr)
	resp, err := nc1.Request("$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var sd struct {
		Success bool            `json:"success"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &sd); err != nil || !sd.Success {
		t.Fatalf("step-down answer %s", resp.Data)
	}
	eventually(t, "a new leader after step-down", 30*time.Second, func() error {
		info := streamInfo(t, ctx, js1)
		if l := info.Cluster.Leader; l == "" || l == first {
			return fmt.Errorf("leader %q (was %q)", l, first)
		}
		return nil
	})

	// Stop the leader's server; publishing goes on elsewhere.
	leader := streamInfo(t, ctx, js1).Cluster.Leader
	var stopped *member
	for _, m := range ms {
		if m.name == leader {
			stopped = m
		}
	}
	stopped.stop()
	var live []njs.JetStream
	for i, m := range ms {
		if m != stopped {
			live = append(live, jss[i])
		}
	}
	for i := 60; i < 90; i++ {
		publish(live[i%2], fmt.Sprintf("m%d", i))
	}
	if len(want) != 90 {
		t.Fatalf("%d distinct sequences for 90 messages", len(want))
	}
	checkAll(t, ctx, live[0], want)

	// The stopped server comes back, catches up, and serves everything
	// once it leads.
	stopped.start(t)
	for i := 90; i < 100; i++ {
		publish(live[i%2], fmt.Sprintf("m%d", i))
	}
	eventually(t, "the restarted server leads", 60*time.Second, func() error {
		info := streamInfo(t, ctx, live[0])
		if info.Cluster.Leader == stopped.name {
			return nil
		}
		nc := connectNC(t, ms[0].run.addr)
		defer nc.Close()
		_, _ = nc.Request("$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", nil, 10*time.Second)
		return fmt.Errorf("leader is %s", info.Cluster.Leader)
	})
	checkAll(t, ctx, live[0], want)

	// Removals go through the log: the next leader has them too.
	s, err := live[0].Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(ctx, 5); err != nil {
		t.Fatal(err)
	}
	delete(want, 5)
	stepDown := func() {
		t.Helper()
		before := streamInfo(t, ctx, live[0]).Cluster.Leader
		nc := connectNC(t, ms[0].run.addr)
		eventually(t, "step-down", 30*time.Second, func() error {
			_, _ = nc.Request("$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", nil, 10*time.Second)
			if l := streamInfo(t, ctx, live[0]).Cluster.Leader; l == before || l == "" {
				return fmt.Errorf("leader still %q", l)
			}
			return nil
		})
	}
	stepDown()
	checkAll(t, ctx, live[0], want)
	if err := s.Purge(ctx, njs.WithPurgeKeep(10)); err != nil {
		t.Fatal(err)
	}
	stepDown()
	if info := streamInfo(t, ctx, live[0]); info.State.Msgs != 10 || info.State.FirstSeq != 91 || info.State.LastSeq != 100 {
		t.Fatalf("after purge keeping 10, the next leader has %+v", info.State)
	}
}

func connectNC(t *testing.T, addr string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func streamInfo(t *testing.T, ctx context.Context, js njs.JetStream) *njs.StreamInfo {
	t.Helper()
	return streamInfoOf(t, ctx, js, "ORDERS")
}

// checkAll reads every acknowledged message back from the stream's
// current leader.
func checkAll(t *testing.T, ctx context.Context, js njs.JetStream, want map[uint64]string) {
	t.Helper()
	info := streamInfo(t, ctx, js)
	if info.State.Msgs != uint64(len(want)) {
		t.Fatalf("leader %s holds %d messages, %d acknowledged", info.Cluster.Leader, info.State.Msgs, len(want))
	}
	s, err := js.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	for seq, body := range want {
		var m *njs.RawStreamMsg
		eventually(t, fmt.Sprintf("get %d", seq), 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			var err error
			m, err = s.GetMsg(ctx, seq)
			return err
		})
		if string(m.Data) != body {
			t.Fatalf("leader %s: sequence %d is %q, acknowledged as %q", info.Cluster.Leader, seq, m.Data, body)
		}
	}
}

// TestClusteredConsumer: a durable consumer of an R3 stream keeps its
// confirmed acks across the loss of the stream's leader: the next leader
// delivers what follows them, and nothing confirmed again.
func TestClusteredConsumer(t *testing.T) {
	ms := startJSCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, js1 := connectAddrJS(t, ms[0].run.addr)
	createOrdersR3(t, ctx, js1)
	for i := range 50 {
		eventually(t, "publish", 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := js1.Publish(ctx, "orders.new", []byte(fmt.Sprintf("m%d", i+1)))
			return err
		})
	}
	eventually(t, "create consumer", 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js1.CreateOrUpdateConsumer(ctx, "ORDERS", njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy, AckWait: time.Minute})
		return err
	})
	_, js2 := connectAddrJS(t, ms[1].run.addr)
	fetch := func(js njs.JetStream, n int) []uint64 {
		t.Helper()
		var seqs []uint64
		eventually(t, "fetch", 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			c, err := js.Consumer(ctx, "ORDERS", "C")
			if err != nil {
				return err
			}
			batch, err := c.Fetch(n, njs.FetchMaxWait(3*time.Second))
			if err != nil {
				return err
			}
			for m := range batch.Messages() {
				md, err := m.Metadata()
				if err != nil {
					return err
				}
				if err := m.DoubleAck(ctx); err != nil {
					return fmt.Errorf("double ack of %d: %w", md.Sequence.Stream, err)
				}
				seqs = append(seqs, md.Sequence.Stream)
			}
			if len(seqs) == 0 {
				return fmt.Errorf("nothing fetched: %v", batch.Error())
			}
			return nil
		})
		return seqs
	}
	got := fetch(js2, 20)
	for len(got) < 20 {
		got = append(got, fetch(js2, 20-len(got))...)
	}
	if got[0] != 1 || got[19] != 20 {
		t.Fatalf("first fetch %v", got)
	}
	leader := streamInfo(t, ctx, js1).Cluster.Leader
	var live njs.JetStream
	for i, m := range ms {
		if m.name == leader {
			m.stop()
		} else if live == nil {
			_, live = connectAddrJS(t, ms[i].run.addr)
		}
	}
	next := fetch(live, 5)
	if next[0] != 21 {
		t.Fatalf("after the leader's loss the consumer delivered %v: confirmed acks up to 20 were lost", next)
	}
}

// TestClusteredStreamLifecycle: an R1 stream in a cluster is reached from
// every server; more replicas than servers is refused with nats-server's
// error; the whole cluster restarts with its streams and consumers; a
// deleted R3 stream is gone from every server, its replica files too.
func TestClusteredStreamLifecycle(t *testing.T) {
	ms := startJSCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, js1 := connectAddrJS(t, ms[0].run.addr)
	_, js3 := connectAddrJS(t, ms[2].run.addr)
	create := func(cfg njs.StreamConfig) error {
		var err error
		eventually(t, "create "+cfg.Name, 30*time.Second, func() error {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err = js1.CreateStream(c, cfg)
			var apiErr *njs.APIError
			if errors.As(err, &apiErr) {
				return nil // an answer: the caller looks at it
			}
			return err
		})
		return err
	}
	err := create(njs.StreamConfig{Name: "FIVE", Subjects: []string{"five.>"}, Replicas: 5})
	var apiErr *njs.APIError
	// nats-server's answer: 10005, no suitable peers for placement.
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10005 {
		t.Fatalf("5 replicas on 3 servers: %v", err)
	}
	if err := create(njs.StreamConfig{Name: "ONE", Subjects: []string{"one.>"}}); err != nil {
		t.Fatal(err)
	}
	if err := create(njs.StreamConfig{Name: "THREE", Subjects: []string{"three.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		for _, subj := range []string{"one.x", "three.x"} {
			eventually(t, "publish", 30*time.Second, func() error {
				c, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				_, err := js3.Publish(c, subj, []byte(fmt.Sprintf("%s-%d", subj, i)))
				return err
			})
		}
	}
	eventually(t, "consumer", 30*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js3.CreateOrUpdateConsumer(c, "THREE", njs.ConsumerConfig{Durable: "D", AckPolicy: njs.AckExplicitPolicy})
		return err
	})
	names := func(js njs.JetStream) []string {
		var out []string
		eventually(t, "stream names", 30*time.Second, func() error {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			out = out[:0]
			l := js.StreamNames(c)
			for n := range l.Name() {
				out = append(out, n)
			}
			return l.Err()
		})
		return out
	}
	if n := names(js3); len(n) != 2 {
		t.Fatalf("stream names %v", n)
	}

	// The whole cluster stops and starts again.
	for _, m := range ms {
		m.stop()
	}
	for _, m := range ms {
		m.start(t)
	}
	_, js2 := connectAddrJS(t, ms[1].run.addr)
	for _, name := range []string{"ONE", "THREE"} {
		eventually(t, "after restart "+name, 60*time.Second, func() error {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			s, err := js2.Stream(c, name)
			if err != nil {
				return err
			}
			info, err := s.Info(c)
			if err != nil {
				return err
			}
			if info.State.Msgs != 10 {
				return fmt.Errorf("%s has %d messages", name, info.State.Msgs)
			}
			return nil
		})
	}
	eventually(t, "consumer after restart", 60*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js2.Consumer(c, "THREE", "D")
		return err
	})

	// Deleting the R3 stream removes it everywhere.
	eventually(t, "delete", 30*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return js2.DeleteStream(c, "THREE")
	})
	if n := names(js2); len(n) != 1 || n[0] != "ONE" {
		t.Fatalf("after delete: %v", n)
	}
	for _, m := range ms {
		dir := filepath.Join(m.args[slices.Index(m.args, "-sd")+1], "jetstream", "_cluster", "streams", hex.EncodeToString([]byte("THREE")))
		eventually(t, "replica files removed", 30*time.Second, func() error {
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: %v", dir, err)
			}
			return nil
		})
	}
}

// TestClusteredJetStreamListenAll: servers listening for routes on
// 0.0.0.0, each listing every server (itself included) in --routes, as
// nats-server configurations do, form one clustered JetStream.
func TestClusteredJetStreamListenAll(t *testing.T) {
	ports := freePorts(t, 3)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var ms []*member
	for i, p := range ports {
		m := &member{name: fmt.Sprintf("a%d", i+1)}
		m.args = []string{"-js", "-a", "127.0.0.1", "-p", "0", "-n", m.name, "-sd", t.TempDir(),
			"--cluster_name", "C", "--cluster", fmt.Sprintf("nats://0.0.0.0:%d", p), "--routes", strings.Join(routes, ",")}
		m.start(t)
		ms = append(ms, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, js := connectAddrJS(t, ms[2].run.addr)
	eventually(t, "R3 stream", 30*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js.CreateStream(c, njs.StreamConfig{Name: "ALL", Subjects: []string{"all.>"}, Replicas: 3})
		return err
	})
	if info := streamInfoOf(t, ctx, js, "ALL"); len(info.Cluster.Replicas) != 2 {
		t.Fatalf("cluster %+v", info.Cluster)
	}
}

// streamInfoOf waits for the info of stream name with a leader.
func streamInfoOf(t *testing.T, ctx context.Context, js njs.JetStream, name string) *njs.StreamInfo {
	t.Helper()
	var info *njs.StreamInfo
	eventually(t, "stream info", 30*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		s, err := js.Stream(c, name)
		if err != nil {
			return err
		}
		info, err = s.Info(c)
		if err == nil && info.Cluster.Leader == "" {
			err = errors.New("no leader")
		}
		return err
	})
	return info
}

// TestClusteredStepDownReachesEveryServer steps an R3 stream's leadership
// down repeatedly with every follower caught up: each server must come to
// lead it after a step-down. (raft's own choice of successor is the first
// caught-up member of the configuration, so the last one never led after a
// step-down, and TestClusteredJetStream failed whenever the server it
// restarts was that one.)
func TestClusteredStepDownReachesEveryServer(t *testing.T) {
	ms := startJSCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, js1 := connectAddrJS(t, ms[0].run.addr)
	createOrdersR3(t, ctx, js1)
	for i := range 5 {
		if _, err := js1.Publish(ctx, "orders.new", []byte(fmt.Sprintf("m%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	nc := connectNC(t, ms[0].run.addr)
	led := map[string]bool{}
	var moves []string
	// Each step-down picks one of two followers at random: 30 of them
	// miss a server with probability 2^-29.
	for i := 0; i < 30 && len(led) < 3; i++ {
		var before string
		eventually(t, "a leader with current followers", 30*time.Second, func() error {
			info := streamInfo(t, ctx, js1)
			if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
				return fmt.Errorf("cluster info %+v", info.Cluster)
			}
			for _, p := range info.Cluster.Replicas {
				if !p.Current || p.Lag != 0 {
					return fmt.Errorf("replica %s current %v lag %d", p.Name, p.Current, p.Lag)
				}
			}
			before = info.Cluster.Leader
			return nil
		})
		if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", nil, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a new leader after step-down", 30*time.Second, func() error {
			l := streamInfo(t, ctx, js1).Cluster.Leader
			if l == "" || l == before {
				return fmt.Errorf("leader %q (was %q)", l, before)
			}
			led[l] = true
			moves = append(moves, before+"->"+l)
			return nil
		})
	}
	if len(led) != 3 {
		t.Fatalf("after step-downs %v only %v came to lead", moves, led)
	}
}

// createOrdersR3 creates the R3 stream ORDERS (orders.>) through js,
// again while the cluster has no meta leader yet.
func createOrdersR3(t *testing.T, ctx context.Context, js njs.JetStream) {
	t.Helper()
	eventually(t, "create R3 stream", 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js.CreateStream(ctx, njs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
		return err
	})
}
