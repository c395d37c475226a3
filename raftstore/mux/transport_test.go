package mux

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// snapFSM adds up the bytes it applies and snapshots the sum.
type snapFSM struct {
	mu  sync.Mutex
	sum uint64
}

func (f *snapFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sum += uint64(l.Data[0])
	return nil
}

func (f *snapFSM) get() uint64 { f.mu.Lock(); defer f.mu.Unlock(); return f.sum }

func (f *snapFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sumSnapshot(f.sum), nil
}

func (f *snapFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var b [8]byte
	if _, err := io.ReadFull(rc, b[:]); err != nil {
		return err
	}
	f.mu.Lock()
	f.sum = binary.BigEndian.Uint64(b[:])
	f.mu.Unlock()
	return nil
}

type sumSnapshot uint64

func (s sumSnapshot) Persist(sink raft.SnapshotSink) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(s))
	if _, err := sink.Write(b[:]); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (sumSnapshot) Release() {}

// TestTransportInstallSnapshot: a member that starts after the leader has
// compacted its log catches up through InstallSnapshot over Transport
// (the snapshot's bytes follow the request on the connection), and then
// through appends; a leadership transfer (TimeoutNow) works over it too.
func TestTransportInstallSnapshot(t *testing.T) {
	var muxes []*Mux
	var servers []raft.Server
	for i := range 3 {
		_, m := listenMux(t)
		muxes = append(muxes, m)
		servers = append(servers, raft.Server{ID: raft.ServerID(fmt.Sprint("s", i)), Address: raft.ServerAddress(m.addr.String())})
	}
	rafts := make([]*raft.Raft, 3)
	fsms := make([]*snapFSM, 3)
	start := func(i int) {
		layer, err := muxes[i].Layer("G")
		if err != nil {
			t.Fatal(err)
		}
		trans := NewTransport(layer, 5*time.Second)
		c := raft.DefaultConfig()
		c.LocalID = servers[i].ID
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = 300*time.Millisecond, 300*time.Millisecond, 150*time.Millisecond
		c.TrailingLogs, c.SnapshotThreshold, c.SnapshotInterval = 5, 1<<20, time.Hour
		c.LogOutput = io.Discard
		store := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		if err := raft.BootstrapCluster(c, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			t.Fatal(err)
		}
		fsms[i] = &snapFSM{}
		r, err := raft.NewRaft(c, fsms[i], store, store, snaps, trans)
		if err != nil {
			t.Fatal(err)
		}
		rafts[i] = r
		t.Cleanup(func() { r.Shutdown().Error(); layer.Close() })
	}
	start(0)
	start(1)
	leader := func() (int, *raft.Raft) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for i, r := range rafts {
				if r != nil && r.State() == raft.Leader {
					return i, r
				}
			}
		}
		t.Fatal("no leader")
		return -1, nil
	}
	_, l := leader()
	for i := 0; i < 50; i++ {
		if err := l.Apply([]byte{1}, 10*time.Second).Error(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	start(2) // its log is empty: entries 1-45 are gone from the leader's
	if err := l.Apply([]byte{2}, 10*time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	waitSum := func(want uint64) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			ok := true
			for _, f := range fsms {
				ok = ok && f.get() == want
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("sums %d %d %d, want %d everywhere", fsms[0].get(), fsms[1].get(), fsms[2].get(), want)
			}
		}
	}
	waitSum(52)
	if err := l.LeadershipTransferToServer(servers[2].ID, servers[2].Address).Error(); err != nil {
		t.Fatal(err)
	}
	if i, l := leader(); i != 2 {
		t.Fatalf("leader %d after the transfer to 2", i)
	} else if err := l.Apply([]byte{3}, 10*time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	waitSum(55)
}
