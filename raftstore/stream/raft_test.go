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
	"github.com/jetwal/jetwal/raftstore/internal/rafttest"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// replica is one server of a replicated stream: raft on a jetwal log store,
// with the stream FSM on a wal store, all on the real disk.
type replica struct {
	id    raft.ServerID
	dir   string
	log   *raftstore.Store
	fsm   *FSM
	trans *raft.InmemTransport
	r     *raft.Raft
}

func (p *replica) Start(t *testing.T, m *rafttest.Mesh) {
	t.Helper()
	var err error
	if p.log, err = raftstore.Open(filepath.Join(p.dir, "raft"), raftstore.Options{Log: raftlog.Options{MinSegmentSize: 64 << 10, MaxSegmentSize: 256 << 10}}); err != nil {
		t.Fatal(err)
	}
	if p.fsm, err = Open(filepath.Join(p.dir, "stream"), wal.Options{Limits: store.Limits{MaxMsgs: 1000}, SegmentSize: 64 << 10}); err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(p.dir, "snaps"), 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := rafttest.Config(p.id)
	c.NoSnapshotRestoreOnStart = true // the stream store survives restarts
	p.trans = m.Join(raft.ServerAddress(p.id))
	if p.r, err = raft.NewRaft(c, p.fsm, p.log, p.log, snaps, p.trans); err != nil {
		t.Fatal(err)
	}
}

// Stop is a crash as far as raft is concerned (kill: nothing more is
// flushed than what was made durable); the FSM is closed so the process can
// reopen its stores.
func (p *replica) Stop(t *testing.T, m *rafttest.Mesh) {
	t.Helper()
	m.Leave(raft.ServerAddress(p.id))
	if err := p.r.Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	p.trans.Close()
	if err := p.fsm.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.log.Close(); err != nil {
		t.Fatal(err)
	}
	p.r = nil
}

// Raft is the replica's raft, nil while it is stopped.
func (p *replica) Raft() *raft.Raft { return p.r }

func leaderOf(t *testing.T, ps []*replica) *replica {
	t.Helper()
	return ps[rafttest.Leader(t, func() []*raft.Raft {
		var rs []*raft.Raft
		for _, p := range ps {
			rs = append(rs, p.r)
		}
		return rs
	})]
}

// publish proposes n appends on the leader and returns the sequences raft
// acknowledged, as a publisher's PubAcks would.
func publish(t *testing.T, l *replica, from, n int, acked map[uint64]string) {
	t.Helper()
	futures := make([]raft.ApplyFuture, n)
	for i := range futures {
		data := fmt.Sprintf("msg-%d", from+i)
		futures[i] = l.r.Apply(EncodeAppend(fmt.Sprintf("orders.%d", (from+i)%3), nil, []byte(data), time.Now().UnixNano()), 10*time.Second)
	}
	var prev uint64
	for i, f := range futures {
		if err := f.Error(); err != nil {
			t.Fatalf("append %d: %v", from+i, err)
		}
		r := f.Response().(*Result)
		if r.Err != nil || r.Seq <= prev {
			t.Fatalf("append %d: %+v after sequence %d", from+i, r, prev)
		}
		prev = r.Seq
		acked[r.Seq] = fmt.Sprintf("msg-%d", from+i)
	}
}

// agree waits until every running replica holds what the leader holds.
func agree(t *testing.T, what string, l *replica, ps []*replica) contents {
	t.Helper()
	var want contents
	rafttest.WaitUntil(t, what, func() bool {
		want = dump(t, l.fsm.Store())
		for _, p := range ps {
			if p.r == nil || p == l {
				continue
			}
			got, err := tryDump(p.fsm.Store())
			if err != nil || fmt.Sprint(got.state) != fmt.Sprint(want.state) || len(got.msgs) != len(want.msgs) {
				return false
			}
		}
		return true
	})
	for _, p := range ps {
		if p.r != nil && p != l {
			sameContents(t, fmt.Sprintf("%s: %s vs leader %s", what, p.id, l.id), dump(t, p.fsm.Store()), want)
		}
	}
	return want
}

// TestReplicatedStream: three replicas on real raft agree on every message;
// the leader is lost and a new one goes on with the next sequences; the old
// leader comes back after the log it lacks was compacted away, catches up
// from a snapshot, and every acknowledged message is on every replica with
// the same sequence.
func TestReplicatedStream(t *testing.T) {
	m := rafttest.NewMesh()
	ps := rafttest.StartCluster(t, m, rafttest.IDs("n", 3), func(id raft.ServerID) *replica {
		return &replica{id: id, dir: t.TempDir()}
	})
	acked := map[uint64]string{}
	l := leaderOf(t, ps)
	publish(t, l, 0, 200, acked)
	// A delete and a filtered purge, replicated like appends.
	if f := l.r.Apply(EncodeDelete(5, false), 10*time.Second); f.Error() != nil || f.Response().(*Result).Err != nil {
		t.Fatalf("delete: %v %+v", f.Error(), f.Response())
	}
	delete(acked, 5)
	f := l.r.Apply(EncodePurge("orders.1", 50, 0), 10*time.Second)
	if f.Error() != nil || f.Response().(*Result).Err != nil {
		t.Fatalf("purge: %v %+v", f.Error(), f.Response())
	}
	for seq, data := range acked { // orders.1 below sequence 50 is gone
		var n int
		fmt.Sscanf(data, "msg-%d", &n)
		if seq < 50 && n%3 == 1 {
			delete(acked, seq)
		}
	}
	agree(t, "three replicas", l, ps)

	// Lose the leader; the other two elect one and go on.
	old := l
	old.Stop(t, m)
	l = leaderOf(t, ps)
	publish(t, l, 200, 150, acked)
	if err := l.r.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	publish(t, l, 350, 20, acked)
	if first, _ := l.log.FirstIndex(); first <= old.fsm.Applied() {
		t.Fatalf("the leader's log starts at %d: the returning replica (at %d) would not need the snapshot", first, old.fsm.Applied())
	}

	// The old leader returns, is behind the compacted log, and catches up
	// from a snapshot plus the tail.
	old.Start(t, m)
	want := agree(t, "after the old leader returned", l, ps)
	if len(want.msgs) != len(acked) {
		t.Fatalf("%d messages, %d acknowledged and not removed", len(want.msgs), len(acked))
	}
	for _, msg := range want.msgs {
		if acked[msg.Seq] != string(msg.Data) {
			t.Fatalf("sequence %d holds %q, acknowledged as %q", msg.Seq, msg.Data, acked[msg.Seq])
		}
	}

	// A replica restarted from its own disk replays nothing twice.
	follower := ps[0]
	if follower == l {
		follower = ps[1]
	}
	follower.Stop(t, m)
	publish(t, l, 370, 10, acked)
	follower.Start(t, m)
	want = agree(t, "after a follower restart", l, ps)
	if len(want.msgs) != len(acked) {
		t.Fatalf("%d messages after the restart, %d acknowledged", len(want.msgs), len(acked))
	}
}
