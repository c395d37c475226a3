package stream

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/raftstore"
	"github.com/jetwal/jetwal/wal"
)

// BenchmarkReplicatedAppend: appends of 128 B proposed on the leader of
// three replicas on loopback TCP (raft's NetworkTransport), real disk, each
// acknowledged once a quorum stored it durably and the leader applied it.
// window proposals are kept in flight, as an async publisher keeps PubAcks
// outstanding.
func BenchmarkReplicatedAppend(b *testing.B) {
	for _, window := range []int{1, 256} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) { benchReplicated(b, window) })
	}
}

func benchReplicated(b *testing.B, window int) {
	type node struct {
		log   *raftstore.Store
		fsm   *FSM
		trans *raft.NetworkTransport
		r     *raft.Raft
	}
	var nodes []*node
	var servers []raft.Server
	for i := range 3 {
		dir := b.TempDir()
		log, err := raftstore.Open(filepath.Join(dir, "raft"), raftstore.Options{Log: raftlog.Options{}})
		if err != nil {
			b.Fatal(err)
		}
		fsm, err := Open(filepath.Join(dir, "stream"), wal.Options{})
		if err != nil {
			b.Fatal(err)
		}
		trans, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 5*time.Second, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		c := raft.DefaultConfig()
		c.LocalID = raft.ServerID(fmt.Sprint("n", i))
		c.NoSnapshotRestoreOnStart = true
		c.LogOutput = io.Discard
		c.SnapshotThreshold = 1 << 30
		c.MaxAppendEntries = 1024
		c.BatchApplyCh = true
		r, err := raft.NewRaft(c, fsm, log, log, raft.NewInmemSnapshotStore(), trans)
		if err != nil {
			b.Fatal(err)
		}
		nodes = append(nodes, &node{log, fsm, trans, r})
		servers = append(servers, raft.Server{ID: c.LocalID, Address: trans.LocalAddr()})
	}
	defer func() {
		for _, n := range nodes {
			n.r.Shutdown().Error()
			n.trans.Close()
			n.fsm.Close()
			n.log.Close()
		}
	}()
	if err := nodes[0].r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		b.Fatal(err)
	}
	var leader *raft.Raft
	for deadline := time.Now().Add(30 * time.Second); leader == nil; {
		for _, n := range nodes {
			if n.r.State() == raft.Leader {
				leader = n.r
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	payload := make([]byte, 128)
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	inflight := make(chan raft.ApplyFuture, window)
	done := make(chan error, 1)
	go func() {
		var err error
		for f := range inflight {
			if e := f.Error(); e != nil && err == nil {
				err = e
			} else if r, ok := f.Response().(*Result); ok && r.Err != nil && err == nil {
				err = r.Err
			}
		}
		done <- err
	}()
	for i := 0; i < b.N; i++ {
		inflight <- leader.Apply(EncodeAppend("orders.new", nil, payload, time.Now().UnixNano()), 0)
	}
	close(inflight)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
