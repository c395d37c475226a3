package consumer

import (
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/raftstore"
	"github.com/jetwal/jetwal/raftstore/internal/rafttest"
)

func TestEntryRoundTrip(t *testing.T) {
	for _, e := range []Entry{{Op: OpDeliver, Seq: 3, DCount: 2, Time: 99}, {Op: OpDeliverNoAck, Seq: 1}, {Op: OpAck, Seq: 7},
		{Op: OpAckAll, Seq: 9}, {Op: OpNak, Seq: 4, Time: -5}, {Op: OpTerm, Seq: 2}, {Op: OpReset, Seq: 10}} {
		got, err := Decode(Encode(e))
		if err != nil || got != e {
			t.Fatalf("%+v: got %+v %v", e, got, err)
		}
		b := Encode(e)
		for n := 0; n < len(b); n++ {
			if _, err := Decode(b[:n]); !errors.Is(err, ErrEntry) {
				t.Fatalf("%+v cut to %d: %v", e, n, err)
			}
		}
		if _, err := Decode(append(b, 0)); !errors.Is(err, ErrEntry) {
			t.Fatalf("%+v with a trailing byte: %v", e, err)
		}
	}
	if _, err := Decode([]byte{42, 0, 0, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrEntry) {
		t.Fatalf("unknown op: %v", err)
	}
}

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
	if p.log, err = raftstore.Open(filepath.Join(p.dir, "raft"), raftstore.Options{}); err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(p.dir, "snaps"), 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := rafttest.Config(p.id)
	p.fsm = New()
	p.trans = m.Join(raft.ServerAddress(p.id))
	if p.r, err = raft.NewRaft(c, p.fsm, p.log, p.log, snaps, p.trans); err != nil {
		t.Fatal(err)
	}
}

func (p *replica) Stop(t *testing.T, m *rafttest.Mesh) {
	t.Helper()
	m.Leave(raft.ServerAddress(p.id))
	if err := p.r.Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	p.trans.Close()
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

func apply(t *testing.T, l *replica, e Entry) *Result {
	t.Helper()
	f := l.r.Apply(Encode(e), 10*time.Second)
	if err := f.Error(); err != nil {
		t.Fatalf("%+v: %v", e, err)
	}
	return f.Response().(*Result)
}

// agree waits until every running replica's state equals the leader's.
func agree(t *testing.T, what string, l *replica, ps []*replica) consumerstate.State {
	t.Helper()
	var want consumerstate.State
	rafttest.WaitUntil(t, what, func() bool {
		want = l.fsm.State()
		for _, p := range ps {
			if p.r != nil {
				if got := p.fsm.State(); !got.Equal(&want) {
					return false
				}
			}
		}
		return true
	})
	if err := want.Verify(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return want
}

// TestReplicatedConsumer: three replicas of a consumer's state agree after
// deliveries, acks, naks, terms and an ack-all; the ack floor the leader
// confirmed survives its loss; a replica that returns after the log was
// compacted catches up from a snapshot, and a restarted one rebuilds its
// state from its own snapshot and log.
func TestReplicatedConsumer(t *testing.T) {
	m := rafttest.NewMesh()
	ps := rafttest.StartCluster(t, m, rafttest.IDs("c", 3), func(id raft.ServerID) *replica {
		return &replica{id: id, dir: t.TempDir()}
	})
	l := leaderOf(t, ps)
	for s := consumerstate.StreamSeq(1); s <= 100; s++ {
		if r := apply(t, l, Entry{Op: OpDeliver, Seq: s, DCount: 1, Time: int64(s)}); r.Err != nil || r.Seq != consumerstate.ConsumerSeq(s) {
			t.Fatalf("deliver %d: %+v", s, r)
		}
	}
	if r := apply(t, l, Entry{Op: OpDeliver, Seq: 3, DCount: 1}); r.Err == nil {
		t.Fatal("a second first delivery of 3 was accepted")
	}
	if r := apply(t, l, Entry{Op: OpAckAll, Seq: 40}); r.N != 40 {
		t.Fatalf("ack all 40: %+v", r)
	}
	for s := consumerstate.StreamSeq(41); s <= 100; s += 2 {
		if r := apply(t, l, Entry{Op: OpAck, Seq: s}); !r.OK {
			t.Fatalf("ack %d: %+v", s, r)
		}
	}
	apply(t, l, Entry{Op: OpNak, Seq: 42, Time: 5})
	apply(t, l, Entry{Op: OpTerm, Seq: 44})
	apply(t, l, Entry{Op: OpDeliver, Seq: 42, DCount: 2, Time: 7})
	confirmed := agree(t, "three replicas", l, ps)
	if confirmed.AckFloor.Stream != 41 || confirmed.Redelivered[42] != 1 {
		t.Fatalf("state after the acks: floor %+v redelivered %v", confirmed.AckFloor, confirmed.Redelivered)
	}

	// Lose the leader: the new one has every confirmed ack.
	old := l
	old.Stop(t, m)
	l = leaderOf(t, ps)
	if st := l.fsm.State(); !st.Equal(&confirmed) {
		t.Fatalf("new leader's state differs: floor %+v, want %+v", st.AckFloor, confirmed.AckFloor)
	}
	for s := consumerstate.StreamSeq(42); s <= 100; s += 2 {
		apply(t, l, Entry{Op: OpAck, Seq: s})
	}
	if err := l.r.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	for s := consumerstate.StreamSeq(101); s <= 130; s++ {
		apply(t, l, Entry{Op: OpDeliver, Seq: s, DCount: 1, Time: int64(s)})
	}
	if first, _ := l.log.FirstIndex(); first <= 120 {
		t.Fatalf("the log was not compacted (first index %d)", first)
	}
	old.Start(t, m)
	st := agree(t, "after the old leader returned", l, ps)
	if st.AckFloor.Stream != 100 || st.Delivered.Stream != 130 || len(st.Pending) != 30 {
		t.Fatalf("final state: floor %+v delivered %+v pending %d", st.AckFloor, st.Delivered, len(st.Pending))
	}

	// A follower restarted from its own disk rebuilds the same state.
	follower := ps[0]
	if follower == l {
		follower = ps[1]
	}
	follower.Stop(t, m)
	apply(t, l, Entry{Op: OpAckAll, Seq: 110})
	follower.Start(t, m)
	if st := agree(t, "after a follower restart", l, ps); st.AckFloor.Stream != 110 {
		t.Fatalf("floor after restart %+v", st.AckFloor)
	}
}
