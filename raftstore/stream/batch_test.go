package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// perSubjectOpts: at most two messages per subject, the third refused
// (discard new), so refusals fall in the middle of batches.
func perSubjectOpts(fs vfs.FS) wal.Options {
	return wal.Options{FS: fs, SegmentSize: 16 << 10, FirstSegmentSize: 4096,
		Limits: store.Limits{MaxMsgsPerSubject: 2, Discard: store.DiscardNew, DiscardNewPerSubject: true}}
}

func cmd(index uint64, data []byte) *raft.Log {
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
}

// TestApplyBatchResults: a batch entry is applied as its appends in order,
// with one result per message; refusals in its middle take no sequence
// and the messages after them are stored. Single appends (older logs) and
// other operations apply beside batches.
func TestApplyBatchResults(t *testing.T) {
	f, err := Open("/r", perSubjectOpts(vfs.NewMemFS()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	batch := EncodeAppendBatch([]Msg{
		{Time: 100, Subject: "a", Data: []byte("a1")},
		{Time: 90, Subject: "a", Data: []byte("a2")},  // an earlier clock: stamped 100
		{Time: 110, Subject: "a", Data: []byte("a3")}, // the third on a: refused
		{Time: 120, Subject: "b", Header: []byte("NATS/1.0\r\nK: v\r\n\r\n"), Data: []byte("b1")},
		{Time: 130, Subject: "bad subject", Data: []byte("x")}, // refused
		{Time: 140, Subject: "c", Data: []byte("c1")},
	})
	out := f.ApplyBatch([]*raft.Log{
		cmd(1, EncodeAppend("z", nil, []byte("z1"), 50)),
		cmd(2, batch),
		{Index: 3, Term: 1, Type: raft.LogNoop},
		cmd(4, EncodeDelete(2, false)),
		cmd(5, EncodeAppendBatch([]Msg{{Time: 1, Subject: "a", Data: []byte("a4")}, {Time: 2, Subject: "d", Data: []byte("d1")}})),
	})
	if r := out[0].(*Result); r.Err != nil || r.Seq != 1 || r.Time != 50 {
		t.Fatalf("single append: %+v", r)
	}
	br, ok := out[1].(*BatchResult)
	if !ok || len(br.Msgs) != 6 {
		t.Fatalf("batch result %#v", out[1])
	}
	type want struct {
		seq  uint64
		ts   int64
		fail error
	}
	for i, w := range []want{{2, 100, nil}, {3, 100, nil}, {0, 0, store.ErrMaxMsgsPerSubj}, {4, 120, nil}, {0, 0, errAny}, {5, 140, nil}} {
		r := br.Msgs[i]
		if w.fail != nil {
			if r.Err == nil || (w.fail != errAny && !errors.Is(r.Err, w.fail)) || r.Seq != 0 {
				t.Fatalf("message %d: %+v, want error %v", i, r, w.fail)
			}
			continue
		}
		if r.Err != nil || r.Seq != w.seq || r.Time != w.ts {
			t.Fatalf("message %d: %+v, want seq %d time %d", i, r, w.seq, w.ts)
		}
	}
	if out[2] != nil {
		t.Fatalf("noop: %#v", out[2])
	}
	if r := out[3].(*Result); r.Err != nil {
		t.Fatalf("delete: %v", r.Err)
	}
	// a has one message left after the delete: a4 is stored.
	br = out[4].(*BatchResult)
	if br.Msgs[0].Err != nil || br.Msgs[0].Seq != 6 || br.Msgs[1].Seq != 7 || br.Msgs[1].Time != 140 {
		t.Fatalf("last batch: %+v", br.Msgs)
	}
	if f.Applied() != 5 {
		t.Fatalf("applied %d", f.Applied())
	}
	var m store.Msg
	if err := f.Store().Load(4, &m); err != nil || m.Subject != "b" || string(m.Data) != "b1" || !bytes.Contains(m.Header, []byte("K: v")) {
		t.Fatalf("seq 4: %+v, %v", m, err)
	}
	// A malformed batch is one error for the entry.
	out = f.ApplyBatch([]*raft.Log{cmd(6, []byte{byte(OpAppendBatch), 1, 0, 0, 0})})
	if r, ok := out[0].(*Result); !ok || !errors.Is(r.Err, ErrEntry) {
		t.Fatalf("malformed batch: %#v", out[0])
	}
}

var errAny = errors.New("any error")

// v1Slot encodes a mark slot as files written before batches hold them.
func v1Slot(gen uint32, m mark) []byte {
	s := make([]byte, markSlot)
	le := binary.LittleEndian
	copy(s, markMagic)
	le.PutUint32(s[4:], gen)
	le.PutUint64(s[8:], m.Index)
	le.PutUint64(s[16:], m.LastSeq)
	le.PutUint64(s[24:], uint64(m.LastTS))
	le.PutUint64(s[32:], xxhash.Sum64(s[:32]))
	return s
}

// TestMarkV1: a mark file in the first format (two 40-byte slots) opens,
// its newest slot wins, the next mark is written in the second format
// beside it, and a torn first write of that format leaves the old mark.
func TestMarkV1(t *testing.T) {
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/r", 0o755); err != nil {
		t.Fatal(err)
	}
	// A replica that stored two messages, then marked index 7 (gen 6, in
	// slot 0) and index 9 (gen 7, slot 1).
	st, err := wal.Open("/r/store", wal.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, _, err := st.Append("s", nil, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	mf, err := fs.Create("/r/applied")
	if err != nil {
		t.Fatal(err)
	}
	old := append(v1Slot(6, mark{Index: 7, LastSeq: 1, LastTS: 70}), v1Slot(7, mark{Index: 9, LastSeq: 2, LastTS: 90})...)
	if _, err := mf.WriteAt(old, 0); err != nil {
		t.Fatal(err)
	}
	mf.Sync()
	mf.Close()

	f, err := Open("/r", wal.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if f.Applied() != 9 || f.LastTime() != 90 || f.seq != 2 {
		t.Fatalf("opened a v1 mark as applied %d, time %d, seq %d", f.Applied(), f.LastTime(), f.seq)
	}
	// Entries up to 9 are skipped; 10 is applied.
	out := f.ApplyBatch([]*raft.Log{cmd(9, EncodeAppend("s", nil, nil, 1)), cmd(10, EncodeAppendBatch([]Msg{{Time: 1, Subject: "t"}}))})
	if out[0] != nil || out[1].(*BatchResult).Msgs[0].Seq != 3 {
		t.Fatalf("after a v1 mark: %#v %#v", out[0], out[1])
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := readAll(fs, "/r/applied")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:2*markSlot], old) {
		t.Fatal("a v2 write touched the v1 slots")
	}
	m, gen, ok := readMarks(b)
	if !ok || gen != 8 || m != (mark{Index: 10, LastSeq: 3, LastTS: 90}) {
		t.Fatalf("after close: %+v gen %d", m, gen)
	}
	// That first v2 write torn (its checksum wrong): the v1 mark stands.
	torn := bytes.Clone(b)
	torn[markOffset2+8] ^= 1
	if m, gen, ok := readMarks(torn); !ok || gen != 7 || m.Index != 9 {
		t.Fatalf("torn v2 slot: %+v gen %d", m, gen)
	}
	// A v2 mark with a position inside an entry reads back.
	mw := &markWriter{fs: fs, path: "/r/applied", gen: gen}
	want := mark{Index: 11, Sub: 3, LastSeq: 5, LastTS: 99}
	if err := mw.write(want); err != nil {
		t.Fatal(err)
	}
	if b, err = readAll(fs, "/r/applied"); err != nil {
		t.Fatal(err)
	}
	if m, _, _ := readMarks(b); m != want {
		t.Fatalf("read back %+v, want %+v", m, want)
	}
}

func readAll(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, err := f.ReadAt(b, 0)
	if n == 0 && err != nil {
		return nil, err
	}
	return b[:n], nil
}
