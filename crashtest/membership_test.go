package crashtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterMembershipUnderLoad changes an R3 stream's servers while
// publishers and a consumer run, on four servers: its leader removed from
// the replicas (the stream moves to the fourth server), up to 4 replicas,
// down to 2, back to 3, down to 1 and back to 3. After every step, once every replica is current: every acknowledged
// message is stored at its acknowledged sequence, no confirmed consumer ack
// was redelivered, and no publisher went more than rollingOutage without
// an acknowledgement.
func TestClusterMembershipUnderLoad(t *testing.T) {
	nodes, nc, js, try := startProcClusterOf(t, procCluster{size: 4})
	defer nc.Close()
	load := startChaosLoad(t, js, try)
	cfg := jetstream.StreamConfig{Name: "CHAOS", Subjects: []string{"chaos.>"}, Replicas: 3}
	replicas := func(n int) func() {
		return func() {
			c := cfg
			c.Replicas = n
			try(fmt.Sprintf("replicas %d", n), func(ctx context.Context) error {
				_, err := js.UpdateStream(ctx, c)
				return err
			})
		}
	}
	steps := []struct {
		what string
		do   func()
	}{
		// A move needs a spare server, so it comes while the stream is R3.
		{"leader removed from the replicas", func() {
			victim := leaderOf(t, nodes, js, try, "CHAOS")
			try("peer-remove "+victim.name, func(ctx context.Context) error {
				return peerRemove(ctx, nc, "CHAOS", victim.name)
			})
		}},
		{"replicas 3 -> 4", replicas(4)},
		{"replicas 4 -> 2", replicas(2)},
		{"replicas 2 -> 3", replicas(3)},
		// One replica is a raft group of one, which grows again.
		{"replicas 3 -> 1", replicas(1)},
		{"replicas 1 -> 3", replicas(3)},
	}
	for _, step := range steps {
		before := load.l.count()
		time.Sleep(time.Second)
		step.do()
		load.checkStep(t, js, try, step.what, before)
	}
	load.finish(t, js, try)
}
