package crashtest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterRollingRestart restarts every server of a cluster in turn, as
// an operator upgrading it would: each is put in lame duck mode (SIGUSR2),
// which hands its raft leaderships to the others, closes its clients and
// exits; it is started again and the next one goes once every replica of
// the stream is current. Publishers and a consumer run throughout. After
// the roll: every acknowledged message is stored at its acknowledged
// sequence, no confirmed consumer ack was redelivered, every server exited
// 0, and no publisher went longer than rollingOutage without an ack.
// JETWAL_ROLLING_SIZES lists the cluster sizes to roll: "3" in make test,
// "3,5" in make cluster-chaos (the stream is R3 in each, so on five servers
// the restarts meet replicas and non-replicas alike).
func TestClusterRollingRestart(t *testing.T) {
	sizes := os.Getenv("JETWAL_ROLLING_SIZES")
	if sizes == "" {
		sizes = "3"
	}
	for _, f := range strings.Split(sizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || size < 3 {
			t.Fatalf("JETWAL_ROLLING_SIZES: %q is not a cluster size of 3 or more", f)
		}
		t.Run(fmt.Sprintf("servers=%d", size), func(t *testing.T) { rollCluster(t, size) })
	}
}

// rollingOutage bounds the time a publisher may go without an
// acknowledgement while the servers roll: the 2 s publish timeout plus one
// election (about 1.3 s here) with room for a loaded machine. Lame duck
// mode hands leadership over before a server leaves, so no election is
// needed when it works: a roll of a server the client is not connected to
// costs about 0.26 s. A roll of the client's own server costs the publish
// timeout, 2 s: the publish in flight when the server closes the
// connection gets its reply nowhere (the client has not yet subscribed
// anywhere else), and nats.go waits out the timeout. nats-server's lame
// duck mode closes clients the same way.
const rollingOutage = 5 * time.Second

func rollCluster(t *testing.T, size int) {
	nodes, nc, js, try := startProcClusterOf(t, procCluster{size: size,
		conf: "lame_duck_grace_period: \"300ms\"\nlame_duck_duration: \"1s\"\n"})
	defer nc.Close()
	load := startChaosLoad(t, js, try)

	for _, n := range nodes {
		before := load.l.count()
		time.Sleep(time.Second)
		if err := n.p.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
			t.Fatalf("%s: lame duck signal: %v", n.name, err)
		}
		select {
		case <-n.p.done:
		case <-time.After(45 * time.Second):
			t.Fatalf("%s did not leave lame duck mode within 45s:\n%s", n.name, n.p.logs.String())
		}
		if code := n.p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("%s exited %d in lame duck mode:\n%s", n.name, code, n.p.logs.String())
		}
		n.start(t)
		n.waitReady(t)
		load.checkStep(t, js, try, n.name+" rolled", before)
	}
	load.finish(t, js, try)
}

// replicasCurrent waits until stream has a leader and every other replica
// reports itself current.
func replicasCurrent(t *testing.T, js jetstream.JetStream, try func(string, func(context.Context) error), stream string) {
	t.Helper()
	try("replicas current", func(ctx context.Context) error {
		info, err := ledStreamInfo(ctx, js, stream)
		if err != nil {
			return err
		}
		if len(info.Cluster.Replicas) != info.Config.Replicas-1 {
			return fmt.Errorf("%d replicas besides the leader, want %d", len(info.Cluster.Replicas), info.Config.Replicas-1)
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current || r.Offline {
				return fmt.Errorf("replica %s not current", r.Name)
			}
		}
		return nil
	})
}
