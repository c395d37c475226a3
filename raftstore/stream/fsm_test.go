package stream

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// testLog is a log that exercises every operation, limits included: the
// store keeps at most 40 messages (discard old), and at most 3 per subject
// "lim.*" is not limited, so evictions, holes and purges interleave.
func testLog(rng *rand.Rand, n int) []*raft.Log {
	var logs []*raft.Log
	ts := int64(1_000_000)
	for i := 1; i <= n; i++ {
		var data []byte
		switch k := rng.IntN(20); {
		case k < 14:
			ts += rng.Int64N(1000) - 200 // clocks may step back: the FSM keeps times monotonic
			var hdr []byte
			if k == 0 {
				hdr = []byte("NATS/1.0\r\nNats-Msg-Id: " + fmt.Sprint(i) + "\r\n\r\n")
			}
			data = EncodeAppend(fmt.Sprintf("s.%d", rng.IntN(5)), hdr, bytes.Repeat([]byte{byte(i)}, rng.IntN(300)), ts)
		case k < 16:
			data = EncodeDelete(uint64(rng.IntN(i)+1), k == 15)
		case k < 18:
			data = EncodePurge(fmt.Sprintf("s.%d", rng.IntN(5)), 0, uint64(rng.IntN(3)))
		case k < 19 && i%2 == 0:
			data = EncodeCompact(uint64(i / 3))
		case k < 19:
			data = EncodeSkip(uint64(i + i/2)) // past the last sequence: a gap (a mirror's)
		default:
			data = EncodeAppend("bad subject", nil, nil, ts) // refused on every replica
		}
		logs = append(logs, &raft.Log{Index: uint64(i), Term: 1, Type: raft.LogCommand, Data: data})
	}
	return logs
}

func testOpts(fs vfs.FS) wal.Options {
	return wal.Options{FS: fs, Limits: store.Limits{MaxMsgs: 40}, SegmentSize: 16 << 10, FirstSegmentSize: 4096}
}

// applyInBatches applies logs in random-sized batches.
func applyInBatches(t *testing.T, f *FSM, rng *rand.Rand, logs []*raft.Log) []any {
	t.Helper()
	var out []any
	for len(logs) > 0 {
		n := min(len(logs), 1+rng.IntN(8))
		out = append(out, f.ApplyBatch(logs[:n])...)
		logs = logs[n:]
	}
	return out
}

// contents is everything a reader can see of a store.
type contents struct {
	state store.State
	msgs  []store.Msg
}

func dump(t *testing.T, st *wal.Store) contents {
	t.Helper()
	c, err := tryDump(st)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tryDump reads a store that a restore may be replacing.
func tryDump(st *wal.Store) (contents, error) {
	c := contents{state: st.StateWithDeleted()}
	var m store.Msg
	for seq := uint64(1); ; seq = m.Seq + 1 {
		m = store.Msg{}
		if err := st.LoadNext("", seq, &m); errors.Is(err, store.ErrEOF) {
			return c, nil
		} else if err != nil {
			return c, fmt.Errorf("load from %d: %w", seq, err)
		}
		c.msgs = append(c.msgs, m)
	}
}

func sameContents(t *testing.T, what string, got, want contents) {
	t.Helper()
	g, w := got.state, want.state
	g.FirstTime, w.FirstTime = g.FirstTime.UTC(), w.FirstTime.UTC()
	g.LastTime, w.LastTime = g.LastTime.UTC(), w.LastTime.UTC()
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("%s: state\n got %+v\nwant %+v", what, g, w)
	}
	if len(got.msgs) != len(want.msgs) {
		t.Fatalf("%s: %d messages, want %d", what, len(got.msgs), len(want.msgs))
	}
	for i, m := range got.msgs {
		x := want.msgs[i]
		if m.Seq != x.Seq || m.Time != x.Time || m.Subject != x.Subject || !bytes.Equal(m.Header, x.Header) || !bytes.Equal(m.Data, x.Data) {
			t.Fatalf("%s: message %d: got seq %d time %d %q, want seq %d time %d %q", what, i, m.Seq, m.Time, m.Subject, x.Seq, x.Time, x.Subject)
		}
	}
}

func openFSM(t *testing.T, fs vfs.FS) *FSM {
	t.Helper()
	f, err := Open("/r", testOpts(fs))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReplayAfterCrash: a replica crashes (kill -9, or a power cut with
// torn unsynced writes) at many points of applying a log; reopened and given the log
// again from the start, as raft replays it, it ends with exactly the
// contents of a replica that applied the log once, and reports the same
// results for what it applied after the crash.
func TestReplayAfterCrash(t *testing.T) {
	logs := testLog(rand.New(rand.NewPCG(1, 2)), 400)
	ref := openFSM(t, vfs.NewMemFS())
	refOut := applyInBatches(t, ref, rand.New(rand.NewPCG(3, 4)), logs)
	want := dump(t, ref.Store())
	if len(want.msgs) == 0 || want.state.NumDeleted == 0 {
		t.Fatalf("the test log leaves %+v: not a useful reference", want.state)
	}
	for _, r := range refOut {
		if r, ok := r.(*Result); ok && r.Err != nil && errors.Is(r.Err, ErrDiverged) {
			t.Fatal(r.Err)
		}
	}
	defer ref.Close()

	for crashAt := 0; crashAt <= len(logs); crashAt += 7 {
		rng := rand.New(rand.NewPCG(uint64(crashAt), 9))
		fs := vfs.NewMemFS()
		f := openFSM(t, fs)
		applyInBatches(t, f, rng, logs[:crashAt])
		// Odd points: kill -9 (every write kept); even: a power cut
		// tearing unsynced writes.
		crashed := fs.CrashCloneTorn(rng)
		if crashAt%2 == 1 {
			crashed = fs.ProcessCrashClone()
		}
		f.Close()

		g := openFSM(t, crashed)
		out := applyInBatches(t, g, rng, logs)
		sameContents(t, fmt.Sprintf("crash after %d entries", crashAt), dump(t, g.Store()), want)
		for i := crashAt; i < len(logs); i++ {
			a, b := out[i].(*Result), refOut[i].(*Result)
			if a.Seq != b.Seq || a.Time != b.Time || a.N != b.N || (a.Err == nil) != (b.Err == nil) {
				t.Fatalf("crash after %d: entry %d: result %+v, want %+v", crashAt, i+1, a, b)
			}
		}
		if g.Applied() != uint64(len(logs)) {
			t.Fatalf("applied %d", g.Applied())
		}
		g.Close()
	}
}

// TestSnapshotRestore: a snapshot taken on one replica and restored on
// another (empty, or holding other data) reproduces its contents, and the
// log after the snapshot then applies identically on both.
func TestSnapshotRestore(t *testing.T) {
	logs := testLog(rand.New(rand.NewPCG(5, 6)), 300)
	rng := rand.New(rand.NewPCG(7, 8))
	a := openFSM(t, vfs.NewMemFS())
	defer a.Close()
	applyInBatches(t, a, rng, logs[:200])
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	for _, prior := range []int{0, 50, 250} {
		b := openFSM(t, vfs.NewMemFS())
		applyInBatches(t, b, rng, testLog(rand.New(rand.NewPCG(11, 12)), prior))
		if err := b.Restore(sink.reader()); err != nil {
			t.Fatal(err)
		}
		if b.Applied() != 200 {
			t.Fatalf("applied %d after restore", b.Applied())
		}
		sameContents(t, fmt.Sprintf("restored over %d entries", prior), dump(t, b.Store()), dump(t, a.Store()))
		b.Close()
	}
	// The log goes on from the snapshot on a restored replica, and survives
	// a reopen.
	fs := vfs.NewMemFS()
	b := openFSM(t, fs)
	if err := b.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	applyInBatches(t, a, rng, logs[200:])
	applyInBatches(t, b, rng, logs[200:])
	sameContents(t, "log after the snapshot", dump(t, b.Store()), dump(t, a.Store()))
	b.Close()
	b = openFSM(t, fs)
	sameContents(t, "reopened", dump(t, b.Store()), dump(t, a.Store()))
	b.Close()

	// A damaged snapshot is refused.
	bad := append([]byte(nil), sink.Bytes()...)
	bad[len(bad)/2] ^= 0xff
	c := openFSM(t, vfs.NewMemFS())
	defer c.Close()
	if err := c.Restore(readCloser{bytes.NewReader(bad)}); err == nil {
		t.Fatal("damaged snapshot restored")
	}
}

type memSink struct{ bytes.Buffer }

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }
func (s *memSink) reader() readCloser {
	return readCloser{bytes.NewReader(append([]byte(nil), s.Bytes()...))}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
