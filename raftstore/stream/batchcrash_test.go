package stream

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// crashLog is a log of batch entries (and some single appends) on 30
// subjects, which at two messages per subject and with bad subjects
// refuses messages in the middle of batches, more and more of them as
// the subjects fill.
func crashLog(rng *rand.Rand, n int) []*raft.Log {
	var logs []*raft.Log
	ts := int64(1_000)
	for i := 1; i <= n; i++ {
		msg := func() Msg {
			ts += rng.Int64N(100) - 20
			subj := fmt.Sprintf("s.%d", rng.IntN(30))
			if rng.IntN(12) == 0 {
				subj = "bad subject"
			}
			return Msg{Time: ts, Subject: subj, Data: bytes.Repeat([]byte{byte(i)}, rng.IntN(200))}
		}
		if rng.IntN(6) == 0 {
			m := msg()
			logs = append(logs, cmd(uint64(i), EncodeAppend(m.Subject, nil, m.Data, m.Time)))
			continue
		}
		msgs := make([]Msg, 1+rng.IntN(10))
		for k := range msgs {
			msgs[k] = msg()
		}
		logs = append(logs, cmd(uint64(i), EncodeAppendBatch(msgs)))
	}
	return logs
}

// promise is what the result of one message said.
type promise struct {
	seq  uint64
	ts   int64
	ok   bool
	skip bool // ErrBeforeMark: said before a restart
}

// promises flattens ApplyBatch results into one promise per message.
func promises(t *testing.T, logs []*raft.Log, out []any) []promise {
	t.Helper()
	var ps []promise
	for i, o := range out {
		switch r := o.(type) {
		case *Result:
			ps = append(ps, promise{seq: r.Seq, ts: r.Time, ok: r.Err == nil})
		case *BatchResult:
			for _, m := range r.Msgs {
				ps = append(ps, promise{seq: m.Seq, ts: m.Time, ok: m.Err == nil, skip: errors.Is(m.Err, ErrBeforeMark)})
			}
		case nil: // at or below the mark: applied before the restart
			n := 1
			if e, _ := Decode(logs[i].Data); e.Op == OpAppendBatch {
				n = len(e.Msgs)
			}
			for range n {
				ps = append(ps, promise{skip: true})
			}
		default:
			t.Fatalf("entry %d: result %#v", logs[i].Index, o)
		}
	}
	return ps
}

// flatMsgs lists the log's messages in order.
func flatMsgs(logs []*raft.Log) []Msg {
	var msgs []Msg
	for _, l := range logs {
		e, _ := Decode(l.Data)
		if e.Op == OpAppend {
			msgs = append(msgs, Msg{Time: e.Time, Subject: e.Subject, Header: e.Header, Data: e.Data})
		} else {
			msgs = append(msgs, e.Msgs...)
		}
	}
	return msgs
}

// checkPromised: the store holds exactly the messages promised stored, at
// their sequences and times, with their subjects and data.
func checkPromised(t *testing.T, what string, st *wal.Store, msgs []Msg, ps []promise) {
	t.Helper()
	got := dump(t, st)
	var want []store.Msg
	for i, p := range ps {
		if p.ok {
			want = append(want, store.Msg{Seq: p.seq, Time: p.ts, Subject: msgs[i].Subject, Data: msgs[i].Data})
		}
	}
	if len(got.msgs) != len(want) {
		t.Fatalf("%s: %d messages, promised %d", what, len(got.msgs), len(want))
	}
	for i, m := range got.msgs {
		x := want[i]
		if m.Seq != x.Seq || m.Time != x.Time || m.Subject != x.Subject || !bytes.Equal(m.Data, x.Data) {
			t.Fatalf("%s: message %d: seq %d time %d %q, promised seq %d time %d %q", what, i, m.Seq, m.Time, m.Subject, x.Seq, x.Time, x.Subject)
		}
	}
}

// TestBatchRefusalCrash: batches with refused messages in their middle are
// applied while the FS is cloned before every write, sync and removal, as
// a kill -9 (every write kept) and as a power cut (unsynced writes torn)
// would leave it. Each clone is reopened and given the whole log again,
// as raft replays it after a restart, and must then hold exactly the
// messages the results promised, at the promised sequences and times,
// and give the same result for every message it applies again. Each
// replay is itself crashed at one of its own writes and replayed once
// more, with the same check. Some crash points leave a store that counts
// sequences it lost the messages of (FSM.repairTail): their replays
// rebuild it, and crash in the middle of that too.
func TestBatchRefusalCrash(t *testing.T) {
	logs := crashLog(rand.New(rand.NewPCG(21, 22)), 60)
	msgs := flatMsgs(logs)

	// The reference: applied once, never crashed.
	ref, err := Open("/r", perSubjectOpts(vfs.NewMemFS()))
	if err != nil {
		t.Fatal(err)
	}
	want := promises(t, logs, applyInBatches(t, ref, rand.New(rand.NewPCG(1, 1)), logs))
	ref.Close()
	var refused, stored, midRefusals int
	for i, p := range want {
		if p.ok {
			stored++
		} else {
			refused++
			if i+1 < len(want) && want[i+1].ok {
				midRefusals++
			}
		}
	}
	if stored < 30 || refused < 30 || midRefusals < 10 {
		t.Fatalf("the log stores %d and refuses %d (%d followed by a stored one): not a useful test", stored, refused, midRefusals)
	}

	type point struct {
		what string
		fs   *vfs.MemFS
	}
	// run applies the log on fs (a hook records crash points) and returns
	// the promises of what it applied.
	run := func(fs *vfs.MemFS, rng *rand.Rand, capture bool) ([]point, []promise) {
		t.Helper()
		var mu sync.Mutex
		var points []point
		on := false
		hook := &vfs.HookFS{Inner: fs, Hook: func(op, path string, mutating bool) {
			mu.Lock()
			defer mu.Unlock()
			if !on || !mutating {
				return
			}
			what := op + " " + filepath.Base(path)
			points = append(points, point{"kill before " + what, fs.ProcessCrashClone()},
				point{"power cut before " + what, fs.CrashCloneTorn(rng)})
		}}
		// Opening is a crash point too: it may repair the store.
		mu.Lock()
		on = capture
		mu.Unlock()
		f, err := Open("/r", perSubjectOpts(hook))
		if err != nil {
			t.Fatal(err)
		}
		out := applyInBatches(t, f, rng, logs)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		on = false
		mu.Unlock()
		return points, promises(t, logs, out)
	}
	// check compares a replay's promises with the reference's.
	check := func(what string, got []promise) {
		t.Helper()
		for i, p := range got {
			if p.skip {
				continue
			}
			if w := want[i]; p.ok != w.ok || p.seq != w.seq || p.ts != w.ts {
				t.Fatalf("%s: message %d: result %+v, promised %+v", what, i, p, w)
			}
		}
	}
	// reopened opens a crashed FS and returns its store's contents after a
	// replay of the whole log.
	verify := func(what string, fs *vfs.MemFS) {
		t.Helper()
		f, err := Open("/r", perSubjectOpts(fs))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer f.Close()
		got := promises(t, logs, applyInBatches(t, f, rand.New(rand.NewPCG(3, 3)), logs))
		check(what, got)
		checkPromised(t, what, f.Store(), msgs, want)
		if f.Applied() != uint64(len(logs)) {
			t.Fatalf("%s: applied %d", what, f.Applied())
		}
	}

	rng := rand.New(rand.NewPCG(5, 5))
	points, got := run(vfs.NewMemFS(), rng, true)
	check("the crashing run", got)
	if len(points) < 100 {
		t.Fatalf("only %d crash points", len(points))
	}
	for i, p := range points {
		what := fmt.Sprintf("point %d: %s", i, p.what)
		// The crash first, then a replay that crashes at one of its own
		// writes, then a replay to the end.
		verify(what, p.fs.ProcessCrashClone())
		again, got := run(p.fs, rng, true)
		check(what+", replayed", got)
		if len(again) > 0 {
			q := again[rng.IntN(len(again))]
			verify(what+", replay crashed: "+q.what, q.fs)
		}
	}
}
