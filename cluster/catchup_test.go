package cluster

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/raftstore/mux"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// publishN appends n messages through the leader's store, waiting for
// every one, and returns the last sequence.
func publishN(t *testing.T, st store.StreamStore, from, n int) uint64 {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last uint64
	var failed error
	for i := range n {
		wg.Add(1)
		data := fmt.Appendf(nil, "message %d %s", from+i, strings.Repeat("x", 64))
		if err := st.AppendAsync(fmt.Sprintf("o.%d", (from+i)%7), nil, data, func(seq uint64, _ int64, err error) {
			mu.Lock()
			if err != nil && failed == nil {
				failed = err
			}
			last = max(last, seq)
			mu.Unlock()
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	return last
}

// storeMsgs reads every message of a replica's store.
func storeMsgs(t *testing.T, r *Replica) []store.Msg {
	t.Helper()
	st := r.fsm.Store()
	var out []store.Msg
	var m store.Msg
	for seq := uint64(1); ; seq = m.Seq + 1 {
		m = store.Msg{}
		err := st.LoadNext("", seq, &m)
		if errors.Is(err, store.ErrEOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

// TestCatchupOnlyMissingRange: a follower of a three-server stream stops;
// the leader takes 1,000 more messages (two of them then deleted, and one
// the follower held), snapshots and compacts its log, so that the
// follower can only catch up from the snapshot. Restarted, the follower
// installs it, keeps its own messages and fetches exactly the 998 it
// lacks from the leader, and ends with the leader's messages at the
// leader's sequences and times. Meanwhile clients subscribed to ">" on
// every server see none of the catch-up traffic, and one that sends a
// request in its form gets no answer.
func TestCatchupOnlyMissingRange(t *testing.T) {
	reps, lead, nodes := streamNodesOpts(t, wal.Options{}, func(o *Options) { o.StreamTrailingLogs = 1 })
	f := (lead + 1) % len(reps)
	leader := reps[lead]
	held := publishN(t, leader.Store(), 0, 3000)
	waitFor(t, "the follower to apply", func() bool { return reps[f].fsm.Applied() == leader.fsm.Applied() })

	seen := watchEverything(t, nodes, 4096)
	// A client's request in the catch-up's form, on a connection of its
	// own (the listeners above hear it: it is $G's, and their interest
	// makes it time out rather than find no responders): nobody answers.
	for _, tn := range nodes {
		nc, err := nats.Connect("nats://" + tn.srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = nc.Request(leader.catchupSubject(), make([]byte, 17), 300*time.Millisecond)
		nc.Close()
		if !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("a client's catch-up request: %v, want no answer", err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	for len(seen) > 0 {
		<-seen // the probes
	}

	peers := nodes[0].n.Peers()
	if err := reps[f].Close(); err != nil {
		t.Fatal(err)
	}
	last := publishN(t, leader.Store(), 3000, 1000)
	for _, seq := range []uint64{held + 10, held + 500, 7} {
		if err := leader.Store().Delete(seq, false); err != nil {
			t.Fatal(err)
		}
	}
	// Both running members snapshot and compact, so that whichever leads
	// when the follower is back has to send it a snapshot.
	other := 3 - lead - f
	waitFor(t, "the other member to apply", func() bool { return reps[other].fsm.Applied() == leader.fsm.Applied() })
	for _, i := range []int{lead, other} {
		if err := reps[i].g.r.Snapshot().Error(); err != nil {
			t.Fatal(err)
		}
	}
	after := publishN(t, leader.Store(), 4000, 5) // entries after the snapshot
	for _, i := range []int{lead, other} {
		if first, _ := reps[i].g.log.FirstIndex(); first <= reps[f].fsm.Applied() {
			t.Fatalf("s%d's log starts at %d, the follower applied %d: no snapshot needed", i+1, first, reps[f].fsm.Applied())
		}
	}

	// Appends the leader sent before it compacted wait in the follower's
	// route for the group to open again, up to mux.DefaultPark: past
	// that, the follower can only catch up from the snapshot.
	time.Sleep(mux.DefaultPark + 500*time.Millisecond)
	r, err := nodes[f].n.OpenStream("ORDERS", peers, false, false, wal.Options{}, func(bool) {})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the follower to catch up", func() bool {
		return r.fsm.Applied() == leader.fsm.Applied() && r.fsm.Store().State().LastSeq == after
	})
	got, want := storeMsgs(t, r), storeMsgs(t, leader)
	if len(got) != len(want) {
		t.Fatalf("follower holds %d messages, leader %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Seq != w.Seq || g.Time != w.Time || g.Subject != w.Subject || string(g.Data) != string(w.Data) {
			t.Fatalf("message %d: follower seq %d %q at %d, leader seq %d %q at %d", i, g.Seq, g.Data, g.Time, w.Seq, w.Data, w.Time)
		}
	}
	// The follower kept what it held and fetched exactly the leader's
	// messages in the range it lacked: the 998 from held+1 to last.
	fs := r.CatchupFetched()
	sent, sbytes := leader.CatchupSent()
	if s, b := reps[other].CatchupSent(); s > 0 { // it led meanwhile
		sent, sbytes = sent+s, sbytes+b
	}
	inRange := uint64(0)
	for _, m := range want {
		if m.Seq >= fs.From && m.Seq <= fs.To {
			inRange++
		}
	}
	if fs.From != held+1 || fs.To != last || fs.Msgs != inRange || sent != fs.Msgs || fs.Msgs == 0 {
		t.Fatalf("fetched %+v, the leader sent %d (%d bytes), %d messages in the range: want the range after %d up to %d, all of it",
			fs, sent, sbytes, inRange, held, last)
	}
	t.Logf("follower %d messages behind on a %d-message stream: fetched %d messages (%d-%d), %d bytes of messages, %d bytes of answers",
		last-held, last, fs.Msgs, fs.From, fs.To, fs.Bytes, sbytes)

	// A request for any member is answered by followers too, each with
	// what it holds (the fetcher's fallback when no leader answers).
	before, _ := reps[other].CatchupSent()
	msgs, through, err := catchupFetcher{r}.ask(held+1, last, 1)
	if err != nil || through < held+1 || len(msgs) == 0 || msgs[0].Seq != held+1 {
		t.Fatalf("asking any member: through %d, %d messages, %v", through, len(msgs), err)
	}
	waitFor(t, "the other member to answer", func() bool {
		n, _ := reps[other].CatchupSent()
		return n > before
	})

	time.Sleep(200 * time.Millisecond)
	for {
		select {
		case subj := <-seen:
			if strings.HasPrefix(subj, "$JWAL.") || strings.HasPrefix(subj, "_JWAL_INBOX.") {
				t.Fatalf("a client received the cluster's internal subject %s", subj)
			}
		default:
			return
		}
	}
}

// TestCatchupTwoOfThree: the third member is down when the follower comes
// back, so the leader and the follower catching up are the group's
// quorum. The follower's install blocks its raft while it fetches, so the
// leader may lose its lease meanwhile, and the follower cannot vote: the
// leader answers as a member (catchup.go), the follower fetches exactly
// the range it lacks, and the two then elect a leader and commit writes.
func TestCatchupTwoOfThree(t *testing.T) {
	reps, lead, nodes := streamNodesOpts(t, wal.Options{}, func(o *Options) { o.StreamTrailingLogs = 1 })
	f := (lead + 1) % len(reps)
	other := 3 - lead - f
	leader := reps[lead]
	held := publishN(t, leader.Store(), 0, 500)
	waitFor(t, "the follower to apply", func() bool { return reps[f].fsm.Applied() == leader.fsm.Applied() })
	peers := nodes[0].n.Peers()
	if err := reps[f].Close(); err != nil {
		t.Fatal(err)
	}
	last := publishN(t, leader.Store(), 500, 2000)
	waitFor(t, "the other member to apply", func() bool { return reps[other].fsm.Applied() == leader.fsm.Applied() })
	if err := leader.g.r.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if err := reps[other].Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(mux.DefaultPark + 500*time.Millisecond) // see TestCatchupOnlyMissingRange
	r, err := nodes[f].n.OpenStream("ORDERS", peers, false, false, wal.Options{}, func(bool) {})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the follower to catch up", func() bool { return r.fsm.Applied() >= leader.fsm.Applied() && !r.fsm.Pending() })
	if fs := r.CatchupFetched(); fs.From != held+1 || fs.To != last || fs.Msgs != last-held {
		t.Fatalf("fetched %+v: want %d-%d, all of it", fs, held+1, last)
	}
	// The two elect a leader (the old one may have lost its lease while
	// the follower could not answer its appends) and commit writes.
	var cur *Replica
	waitFor(t, "a leader of the two", func() bool {
		for _, x := range []*Replica{leader, r} {
			if x.IsLeader() {
				cur = x
				return true
			}
		}
		return false
	})
	var end uint64
	waitFor(t, "writes after the catch-up", func() bool {
		last, _, err := cur.Store().Append("o.after", nil, []byte("after"))
		if err != nil {
			t.Logf("write after the catch-up: %v", err)
			time.Sleep(200 * time.Millisecond)
			return false
		}
		end = last
		return true
	})
	waitFor(t, "both to apply the writes after", func() bool {
		return r.fsm.Store().State().LastSeq == end && leader.fsm.Store().State().LastSeq == end
	})
	got, want := storeMsgs(t, r), storeMsgs(t, leader)
	if len(got) != len(want) || got[len(got)-1].Seq != want[len(want)-1].Seq || string(got[held].Data) != string(want[held].Data) {
		t.Fatalf("follower holds %d messages, leader %d", len(got), len(want))
	}
}

// TestCatchupResumesAfterClose: the follower is closed in the middle of
// its catch-up (raft has stored the snapshot; the replica has not marked
// it applied). Reopened, raft counts the snapshot applied and the replica
// has the restore pending: the next write completes it first, fetching
// only what the first attempt had not stored, and the follower ends with
// the leader's messages.
func TestCatchupResumesAfterClose(t *testing.T) {
	reps, lead, nodes := streamNodesOpts(t, wal.Options{}, func(o *Options) { o.StreamTrailingLogs = 1 })
	f := (lead + 1) % len(reps)
	other := 3 - lead - f
	leader := reps[lead]
	held := publishN(t, leader.Store(), 0, 100)
	waitFor(t, "the follower to apply", func() bool { return reps[f].fsm.Applied() == leader.fsm.Applied() })
	peers := nodes[0].n.Peers()
	if err := reps[f].Close(); err != nil {
		t.Fatal(err)
	}
	last := publishN(t, leader.Store(), 100, 60000)
	waitFor(t, "the other member to apply", func() bool { return reps[other].fsm.Applied() == leader.fsm.Applied() })
	for _, i := range []int{lead, other} {
		if err := reps[i].g.r.Snapshot().Error(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(mux.DefaultPark + 500*time.Millisecond) // see TestCatchupOnlyMissingRange
	r, err := nodes[f].n.OpenStream("ORDERS", peers, false, false, wal.Options{}, func(bool) {})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the catch-up to begin", func() bool { return r.CatchupFetched().Msgs > 0 })
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	first := r.CatchupFetched()
	if first.Msgs >= last-held {
		t.Fatalf("the catch-up ended (%+v) before the close: the test proves nothing", first)
	}
	r, err = nodes[f].n.OpenStream("ORDERS", peers, false, false, wal.Options{}, func(bool) {})
	if err != nil {
		t.Fatal(err)
	}
	if !r.fsm.Pending() {
		t.Fatal("reopened without the restore pending")
	}
	end := publishN(t, leader.Store(), 60100, 1)
	waitFor(t, "the follower to catch up", func() bool { return r.fsm.Store().State().LastSeq == end && !r.fsm.Pending() })
	second := r.CatchupFetched()
	if first.Msgs+second.Msgs > last-held+catchupMsgs || second.From <= held+1 {
		t.Fatalf("fetched %+v, then %+v: want the rest only (%d missing at first)", first, second, last-held)
	}
	got, want := storeMsgs(t, r), storeMsgs(t, leader)
	if len(got) != len(want) {
		t.Fatalf("follower holds %d messages, leader %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || got[i].Time != want[i].Time || string(got[i].Data) != string(want[i].Data) {
			t.Fatalf("message %d: follower seq %d, leader seq %d", i, got[i].Seq, want[i].Seq)
		}
	}
	t.Logf("fetched %d messages before the close, %d after (%d-%d)", first.Msgs, second.Msgs, second.From, second.To)
}
