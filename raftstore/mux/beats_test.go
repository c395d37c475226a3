package mux

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// sharedGroups starts groups raft groups of three on three muxes, each
// with shared heartbeats, and returns rafts[group][member] and their
// transports.
func sharedGroups(t *testing.T, muxes []*Mux, groups int, hb time.Duration) ([][]*raft.Raft, [][]*Transport) {
	t.Helper()
	var servers []raft.Server
	for i, m := range muxes {
		servers = append(servers, raft.Server{ID: raft.ServerID(fmt.Sprint("s", i)), Address: raft.ServerAddress(m.addr.String())})
	}
	out := make([][]*raft.Raft, groups)
	transports := make([][]*Transport, groups)
	for g := range groups {
		for i, m := range muxes {
			layer, err := m.Layer(fmt.Sprint("G", g))
			if err != nil {
				t.Fatal(err)
			}
			trans := NewTransport(layer, 5*time.Second)
			trans.ShareHeartbeats(hb / 10)
			c := raft.DefaultConfig()
			c.LocalID = servers[i].ID
			c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = hb, hb, hb/2
			// Appends as rare as the cluster makes them: the followers hear
			// from their leader through the heartbeats alone.
			c.CommitTimeout = 10 * hb
			c.LogOutput = io.Discard
			store := raft.NewInmemStore()
			snaps := raft.NewInmemSnapshotStore()
			if err := raft.BootstrapCluster(c, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
				t.Fatal(err)
			}
			r, err := raft.NewRaft(c, &snapFSM{}, store, store, snaps, trans)
			if err != nil {
				t.Fatal(err)
			}
			out[g] = append(out[g], r)
			transports[g] = append(transports[g], trans)
			t.Cleanup(func() { r.Shutdown().Error(); trans.Close(); layer.Close() })
		}
	}
	return out, transports
}

// leaderOf waits for one of rafts to lead and returns its position.
func leaderOf(t *testing.T, rafts []*raft.Raft) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for i, r := range rafts {
			if r.State() == raft.Leader {
				return i
			}
		}
	}
	t.Fatal("no leader")
	return -1
}

// rounds counts the rounds m's senders made.
func (m *Mux) rounds() uint64 {
	m.beats.mu.Lock()
	defer m.beats.mu.Unlock()
	var n uint64
	for _, s := range m.beats.senders {
		n += s.sent.Load()
	}
	return n
}

// TestSharedHeartbeats: twenty groups of three whose heartbeats are
// shared keep their leaders and terms for many election timeouts (the
// followers hear from their leaders only through the shared rounds),
// commit, and verify their leadership; the rounds a server sends do not
// grow with the groups (one per peer and period, not one per group).
func TestSharedHeartbeats(t *testing.T) {
	var muxes []*Mux
	for range 3 {
		_, m := listenMux(t)
		muxes = append(muxes, m)
	}
	const groups, hb = 20, 200 * time.Millisecond
	rafts, _ := sharedGroups(t, muxes, groups, hb)
	leaders := make([]int, groups)
	terms := make([]uint64, groups)
	for g := range groups {
		leaders[g] = leaderOf(t, rafts[g])
		if err := rafts[g][leaders[g]].Apply([]byte{1}, 5*time.Second).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for g := range groups {
		terms[g] = rafts[g][leaders[g]].CurrentTerm()
	}
	before := make([]uint64, 3)
	for i, m := range muxes {
		before[i] = m.rounds()
	}
	const watch = 2 * time.Second // ten heartbeat timeouts
	time.Sleep(watch)
	for g := range groups {
		for i, r := range rafts[g] {
			if r.CurrentTerm() != terms[g] {
				t.Fatalf("group %d member %d: term %d, was %d: a follower timed out", g, i, r.CurrentTerm(), terms[g])
			}
			if (i == leaders[g]) != (r.State() == raft.Leader) {
				t.Fatalf("group %d member %d: state %v, leader was %d", g, i, r.State(), leaders[g])
			}
		}
		if err := rafts[g][leaders[g]].VerifyLeader().Error(); err != nil {
			t.Fatalf("group %d: %v", g, err)
		}
		if err := rafts[g][leaders[g]].Apply([]byte{2}, 5*time.Second).Error(); err != nil {
			t.Fatalf("group %d: %v", g, err)
		}
	}
	// A round per peer every hb/10 at most (and one more per kick): 2
	// peers × 10 periods × 2 s / 200 ms = 200 in the window; one per group
	// would be 20 groups' worth.
	for i, m := range muxes {
		n := m.rounds() - before[i]
		if n == 0 || n > 2*uint64(watch/(hb/10))+40 {
			t.Fatalf("server %d sent %d heartbeat rounds in %v, want some and at most ~%d", i, n, watch, 2*uint64(watch/(hb/10)))
		}
	}
}

// TestSharedHeartbeatsCutLeaderStepsDown: a leader whose shared rounds to
// both followers fail (their servers gone) loses its lease and steps
// down, as with heartbeats of its own.
func TestSharedHeartbeatsCutLeaderStepsDown(t *testing.T) {
	var muxes []*Mux
	for range 3 {
		_, m := listenMux(t)
		muxes = append(muxes, m)
	}
	const hb = 200 * time.Millisecond
	rafts, _ := sharedGroups(t, muxes, 3, hb)
	// Wait for every group to lead, and pick the server leading group 0.
	for g := range rafts {
		leaderOf(t, rafts[g])
	}
	li := leaderOf(t, rafts[0])
	for i, m := range muxes {
		if i != li {
			m.Close()
			for g := range rafts {
				rafts[g][i].Shutdown().Error()
			}
		}
	}
	deadline := time.Now().Add(10 * hb)
	for rafts[0][li].State() == raft.Leader {
		if time.Now().After(deadline) {
			t.Fatalf("the leader cut off from both followers still leads after %v", 10*hb)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSharedHeartbeatClosedGroupForgotten: a group's transport closed
// leaves every sender's rounds at once.
func TestSharedHeartbeatClosedGroupForgotten(t *testing.T) {
	var muxes []*Mux
	for range 3 {
		_, m := listenMux(t)
		muxes = append(muxes, m)
	}
	rafts, trans := sharedGroups(t, muxes, 2, 200*time.Millisecond)
	li := leaderOf(t, rafts[0])
	time.Sleep(100 * time.Millisecond) // a round or two
	inRounds := func(group string) bool {
		m := muxes[li]
		m.beats.mu.Lock()
		defer m.beats.mu.Unlock()
		for _, s := range m.beats.senders {
			s.mu.Lock()
			_, ok := s.groups[group]
			s.mu.Unlock()
			if ok {
				return true
			}
		}
		return false
	}
	if !inRounds("G0") {
		t.Fatal("group G0's leader has no heartbeats in the rounds")
	}
	rafts[0][li].Shutdown().Error() // raft leaves its transport to its owner
	trans[0][li].Close()
	if inRounds("G0") {
		t.Fatal("group G0 is still in the rounds after its transport closed")
	}
}

// TestBeatsOnlyToSharingGroups: a round that names a group whose
// transport does not share heartbeats, or no group here, is answered with
// an error for each, and the group's raft never sees the request (its
// term, far behind the round's, stays).
func TestBeatsOnlyToSharingGroups(t *testing.T) {
	_, m := listenMux(t)
	layer, err := m.Layer("M")
	if err != nil {
		t.Fatal(err)
	}
	trans := NewTransport(layer, 5*time.Second) // not shared
	c := raft.DefaultConfig()
	c.LocalID = "s0"
	c.LogOutput = io.Discard
	store := raft.NewInmemStore()
	snaps := raft.NewInmemSnapshotStore()
	if err := raft.BootstrapCluster(c, store, store, snaps, trans, raft.Configuration{Servers: []raft.Server{{ID: "s0", Address: trans.LocalAddr()}}}); err != nil {
		t.Fatal(err)
	}
	r, err := raft.NewRaft(c, &snapFSM{}, store, store, snaps, trans)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown().Error(); trans.Close(); layer.Close() })
	leaderOf(t, []*raft.Raft{r})
	term := r.CurrentTerm()
	conn, err := plainDial(m.addr.String(), beatsGroup, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("intruder"), Addr: []byte("127.0.0.1:1")}
	reqs := []beatReq{{Group: "M", Req: raft.AppendEntriesRequest{RPCHeader: hdr, Term: term + 1000}}, {Group: "nope", Req: raft.AppendEntriesRequest{RPCHeader: hdr, Term: term + 1000}}}
	if _, err := conn.Write(appendRound(nil, reqs)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	body, err := readFrame(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := parseAnswers(body, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range answers {
		if a.Err == "" {
			t.Errorf("round item %d (group %s) answered %+v, want an error", i, reqs[i].Group, a.Resp)
		}
	}
	if got := r.CurrentTerm(); got != term || r.State() != raft.Leader {
		t.Fatalf("the group's raft went from term %d to %d (%v)", term, got, r.State())
	}
}

// TestBeatFrames: rounds and answers survive encoding; every truncation
// and a few corruptions of a frame are refused with errBeatFrame, never a
// panic.
func TestBeatFrames(t *testing.T) {
	reqs := []beatReq{
		{Group: "S.ORDERS", Req: raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: 3, ID: []byte("n1"), Addr: []byte("127.0.0.1:6222")}, Term: 7, Leader: []byte("127.0.0.1:6222")}},
		{Group: "S#00ff", Req: raft.AppendEntriesRequest{Term: 1 << 40}},
	}
	frame := appendRound(nil, reqs)
	body, err := readFrame(bytes.NewReader(frame), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseRound(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Group != "S.ORDERS" || got[0].Req.Term != 7 || string(got[0].Req.RPCHeader.ID) != "n1" ||
		string(got[0].Req.RPCHeader.Addr) != "127.0.0.1:6222" || got[0].Req.RPCHeader.ProtocolVersion != 3 ||
		string(got[0].Req.Leader) != "127.0.0.1:6222" || got[1].Group != "S#00ff" || got[1].Req.Term != 1<<40 { //nolint:staticcheck // the field raft fills
		t.Fatalf("round decoded as %+v", got)
	}
	answers := []beatAnswer{
		{Resp: raft.AppendEntriesResponse{RPCHeader: raft.RPCHeader{ID: []byte("n2")}, Term: 9, LastLog: 42, Success: true}},
		{Err: "mux: no group S#00ff here"},
		{Resp: raft.AppendEntriesResponse{Term: 3, NoRetryBackoff: true}},
	}
	abody, err := readFrame(bytes.NewReader(appendAnswers(nil, answers)), nil)
	if err != nil {
		t.Fatal(err)
	}
	gotA, err := parseAnswers(abody, 3)
	if err != nil {
		t.Fatal(err)
	}
	if gotA[0].Resp.Term != 9 || gotA[0].Resp.LastLog != 42 || !gotA[0].Resp.Success || string(gotA[0].Resp.RPCHeader.ID) != "n2" ||
		gotA[1].Err != answers[1].Err || gotA[2].Resp.Success || !gotA[2].Resp.NoRetryBackoff {
		t.Fatalf("answers decoded as %+v", gotA)
	}
	if _, err := parseAnswers(abody, 2); !errors.Is(err, errBeatFrame) {
		t.Fatalf("3 answers taken for 2 requests: %v", err)
	}
	for n := range len(body) {
		if _, err := parseRound(body[:n]); !errors.Is(err, errBeatFrame) {
			t.Fatalf("round truncated to %d of %d bytes: %v", n, len(body), err)
		}
	}
	for n := range len(abody) {
		if _, err := parseAnswers(abody[:n], 3); !errors.Is(err, errBeatFrame) {
			t.Fatalf("answers truncated to %d of %d bytes: %v", n, len(abody), err)
		}
	}
	if _, err := parseRound(append(body[:len(body):len(body)], 0)); !errors.Is(err, errBeatFrame) {
		t.Fatalf("a byte after the last request: %v", err)
	}
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0x0f} // a count of 2^32-1
	if _, err := parseRound(huge); !errors.Is(err, errBeatFrame) {
		t.Fatalf("a count past the body: %v", err)
	}
	big := []byte{0x10, 0, 0, 0}
	if _, err := readFrame(bytes.NewReader(big), nil); !errors.Is(err, errBeatFrame) {
		t.Fatalf("a 256 MiB frame: %v", err)
	}
}

// FuzzBeatRound: no input makes parseRound panic, and what it accepts
// encodes back to the same body.
func FuzzBeatRound(f *testing.F) {
	f.Add(appendRound(nil, []beatReq{{Group: "S.X", Req: raft.AppendEntriesRequest{Term: 3, RPCHeader: raft.RPCHeader{ID: []byte("a")}}}})[4:])
	f.Add([]byte{0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		reqs, err := parseRound(body)
		if err != nil {
			return
		}
		again := appendRound(nil, reqs)[4:]
		if _, err := parseRound(again); err != nil {
			t.Fatalf("re-encoded round refused: %v", err)
		}
	})
}

// TestBeatForgottenDuringRound: a group whose call gave up (its timeout)
// while a round with its heartbeat is out, and whose transport then
// closes, leaves nothing the round's end could block on: the sender goes
// on serving other calls (each waiting call's channel holds one result;
// forget answers it, and the round must not answer it again).
func TestBeatForgottenDuringRound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // read nothing, answer nothing: the round waits
		}
	}()
	_, m := listenMux(t)
	m.beats.share(20 * time.Millisecond)
	target := raft.ServerAddress(ln.Addr().String())
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("s0"), Addr: []byte("s0")}, Term: 1}
	var resp raft.AppendEntriesResponse
	if err := m.beats.beat("G", target, req, &resp, 200*time.Millisecond); err == nil {
		t.Fatal("a heartbeat to a peer that answers nothing succeeded")
	}
	var peer net.Conn
	select {
	case peer = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("no round was sent")
	}
	m.beats.forget("G") // answers the call that gave up: nobody reads it
	peer.Close()        // the round fails now, with G's entry in hand
	second := make(chan error, 1)
	go func() {
		var resp raft.AppendEntriesResponse
		second <- m.beats.beat("H", target, req, &resp, 2*time.Second)
	}()
	select {
	case <-second: // answered (an error: the peer answers nothing)
	case <-time.After(10 * time.Second):
		t.Fatal("the sender is stuck after a forgotten group's round ended")
	}
}
