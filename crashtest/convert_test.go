package crashtest

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterConvertKill9 grows a stream created with one replica to three
// (its server converts the local stream into a raft group: package
// jetstream's cluster_convert.go) under publishers and a consumer, and
// kills that server with SIGKILL midway: once it has marked the local
// stream as converting, or once the group holds part of the copy (its
// directory past 256 KiB). The
// restarted server finishes the conversion: the stream ends up with three
// current replicas, every acknowledged message is in it at its
// acknowledged sequence, no confirmed consumer ack is redelivered, every
// replica's store holds the same messages, and the local copy is gone.
func TestClusterConvertKill9(t *testing.T) {
	for _, at := range []string{"marked", "copying"} {
		t.Run(at, func(t *testing.T) { convertKill9(t, at) })
	}
}

func convertKill9(t *testing.T, at string) {
	nodes, nc, js, try := startProcCluster(t)
	defer nc.Close()
	cfg := jetstream.StreamConfig{Name: "CHAOS", Subjects: []string{"chaos.>"}, Replicas: 1}
	try("create stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, cfg)
		return err
	})
	try("create consumer", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateConsumer(ctx, "CHAOS", jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 10 * time.Minute})
		return err
	})
	origin := leaderOf(t, nodes, js, try, "CHAOS")

	l := newLedger()
	acks := newAckChecker(l)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.publishUntil(stop, js, "chaos.m", fmt.Sprintf("w%d", w), 3*time.Second, 10*time.Millisecond)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		acks.consumeUntil(stop, js, "CHAOS", "W")
	}()
	time.Sleep(2 * time.Second)
	before := l.count()

	cfg.Replicas = 3
	try("replicas 3", func(ctx context.Context) error {
		_, err := js.UpdateStream(ctx, cfg)
		if err != nil && strings.Contains(err.Error(), "being converted") {
			return nil // an earlier try was applied
		}
		return err
	})
	local := filepath.Join(origin.store, "jetstream", "*", "streams", "CHAOS")
	group := filepath.Join(origin.store, "jetstream", "_cluster", "streams", hex.EncodeToString([]byte("CHAOS")), "fsm")
	deadline := time.Now().Add(30 * time.Second)
	for {
		marked, _ := filepath.Glob(filepath.Join(local, "converting"))
		if len(marked) > 0 && (at == "marked" || dirBytes(group) > 256<<10) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no conversion under way on %s (%s)\n%s", origin.name, at, origin.p.logs.String())
		}
		time.Sleep(time.Millisecond)
	}
	origin.p.kill()
	t.Logf("killed %s with the conversion %s, %d messages acknowledged before it", origin.name, at, before)
	origin.start(t)
	origin.waitReady(t)

	try("three current replicas", func(ctx context.Context) error {
		info, err := ledStreamInfo(ctx, js, "CHAOS")
		if err != nil {
			return err
		}
		if info.Config.Replicas != 3 || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("replicas %d, cluster %+v", info.Config.Replicas, info.Cluster)
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current {
				return fmt.Errorf("%s not current", r.Name)
			}
		}
		return nil
	})
	time.Sleep(1500 * time.Millisecond) // publishing into the group
	close(stop)
	wg.Wait()
	l.verify(try, js, "CHAOS")
	if f := l.failures(); f != "" {
		t.Fatal(f)
	}
	if l.count() <= before {
		t.Fatalf("nothing acknowledged after the conversion began (%d before)", before)
	}
	t.Logf("%d acknowledged, %d confirmed consumer acks", l.count(), acks.count())

	last := l.last()
	leaderOf(t, nodes, js, try, "CHAOS")
	time.Sleep(3 * time.Second) // followers apply the last commits
	nc.Close()
	for _, n := range nodes {
		n.p.stop(t)
	}
	if left, _ := filepath.Glob(local); len(left) > 0 {
		t.Fatalf("the local copy is still there: %v", left)
	}
	var ref []string
	for i, n := range nodes {
		msgs := replicaMsgs(t, n)
		if len(msgs) == 0 || msgs[len(msgs)-1].Seq < last {
			t.Fatalf("%s: replica ends before sequence %d", n.name, last)
		}
		var got []string
		for _, m := range msgs {
			got = append(got, fmt.Sprintf("%d %s %s %d", m.Seq, m.Subject, m.Data, m.Time))
		}
		if i == 0 {
			ref = got
			continue
		}
		if strings.Join(got, "\n") != strings.Join(ref, "\n") {
			t.Fatalf("%s and %s hold different messages (%d and %d)", n.name, nodes[0].name, len(got), len(ref))
		}
	}
}

// dirBytes is the size of the files under dir, 0 when there is none.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
