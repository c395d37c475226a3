//go:build netns

package crashtest

// Network partitions of a clustered JetStream, in network namespaces (root
// only; `make cluster-partition`). Each server runs in a namespace of its
// own, on a veth pair to a bridge in the test's namespace; cutting a
// server's link partitions it from the other servers and from the clients.

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	nsBridge = "jwpbr0"
	nsNet    = "10.77.0."
)

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// netnsCluster makes three namespaces on one bridge and returns a cleanup.
func netnsCluster(t *testing.T) {
	t.Helper()
	cleanup := func() {
		for i := 1; i <= 3; i++ {
			_ = exec.Command("ip", "netns", "del", fmt.Sprintf("jwp%d", i)).Run()
		}
		_ = exec.Command("ip", "link", "del", nsBridge).Run()
	}
	cleanup()
	t.Cleanup(cleanup)
	sh(t, "ip", "link", "add", nsBridge, "type", "bridge")
	sh(t, "ip", "addr", "add", nsNet+"254/24", "dev", nsBridge)
	sh(t, "ip", "link", "set", nsBridge, "up")
	for i := 1; i <= 3; i++ {
		ns, veth, peer := fmt.Sprintf("jwp%d", i), fmt.Sprintf("jwpv%d", i), fmt.Sprintf("jwpv%dp", i)
		sh(t, "ip", "netns", "add", ns)
		sh(t, "ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
		sh(t, "ip", "link", "set", peer, "netns", ns)
		sh(t, "ip", "link", "set", veth, "master", nsBridge)
		sh(t, "ip", "link", "set", veth, "up")
		sh(t, "ip", "netns", "exec", ns, "ip", "addr", "add", nsNet+strconv.Itoa(i)+"/24", "dev", peer)
		sh(t, "ip", "netns", "exec", ns, "ip", "link", "set", peer, "up")
		sh(t, "ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
	}
}

// partition cuts (or heals) server i's link.
func partition(t *testing.T, i int, cut bool) {
	t.Helper()
	state := "up"
	if cut {
		state = "down"
	}
	sh(t, "ip", "link", "set", fmt.Sprintf("jwpv%d", i), state)
}

// TestClusterPartition isolates the R3 stream's leader while publishers
// run through every server, heals it, and repeats: the majority elects a
// new leader and goes on; the isolated server acknowledges nothing it
// cannot commit; after healing, every acknowledged message is in the stream
// at its sequence, and no sequence was acknowledged for two messages.
func TestClusterPartition(t *testing.T) {
	netnsCluster(t)
	cycles := envInt("JETWAL_PARTITION_CYCLES", 3)
	var routes, urls []string
	for i := 1; i <= 3; i++ {
		routes = append(routes, "nats://"+nsNet+strconv.Itoa(i)+":6222")
		urls = append(urls, "nats://"+nsNet+strconv.Itoa(i)+":4222")
	}
	var nodes []*clusterNode
	for i := 1; i <= 3; i++ {
		n := &clusterNode{name: fmt.Sprintf("n%d", i), store: t.TempDir(), port: 4222}
		n.args = []string{"netns", "exec", fmt.Sprintf("jwp%d", i), jetwalBinary(t), "serve", "-js",
			"-a", nsNet + strconv.Itoa(i), "-p", "4222", "-sd", n.store, "-n", n.name, "--cluster_name", "P",
			"--cluster", routes[i-1], "--routes", strings.Join(routes, ",")}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		cmd := exec.Command("ip", n.args...)
		p := &proc{cmd: cmd, logs: &lockedBuffer{}, done: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = p.logs, p.logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { cmd.Wait(); close(p.done) }()
		t.Cleanup(p.kill)
		n.p = p
	}
	opts := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond), nats.RetryOnFailedConnect(true), nats.Timeout(time.Second)}
	nc, err := nats.Connect(strings.Join(urls, ","), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	try := retrier(t, 90*time.Second)
	try("create stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PART", Subjects: []string{"part.>"}, Replicas: 3})
		return err
	})

	l := newLedger()
	for cycle := range cycles {
		leader := leaderOf(t, nodes, js, try, "PART")
		idx := 0
		for i, n := range nodes {
			if n == leader {
				idx = i + 1
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 3 {
			conn, err := nats.Connect(urls[w], opts...) // one client per server, the leader's included
			if err != nil {
				t.Fatal(err)
			}
			wjs, _ := jetstream.New(conn)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				l.publishUntil(stop, wjs, "part.m", fmt.Sprintf("c%d-w%d", cycle, w), 2*time.Second, 20*time.Millisecond)
			}()
		}
		time.Sleep(time.Second)
		before := l.count()
		partition(t, idx, true)
		t.Logf("cycle %d: isolated the leader %s", cycle, leader.name)
		time.Sleep(4 * time.Second)
		during := l.count()
		partition(t, idx, false)
		time.Sleep(3 * time.Second)
		close(stop)
		wg.Wait()
		if during <= before {
			t.Errorf("cycle %d: nothing acknowledged while the leader was isolated", cycle)
		}
		l.verify(try, js, "PART")
		t.Logf("cycle %d: %d acknowledged (%d while the leader was isolated)", cycle, l.count(), during-before)
		if f := l.failures(); f != "" {
			t.Fatalf("cycle %d: %s", cycle, f)
		}
	}
}
