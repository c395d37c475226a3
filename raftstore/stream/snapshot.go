package stream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// A version 1 snapshot is the stream's messages at a raft index (little
// endian; doc.go draws both versions):
//
//	header   "JWRS" | version u32 | index u64 | first u64 | last u64 | last time i64
//	message  seq u64 (> 0) | time i64 | uvarint len | subject | uvarint len | header | uvarint len | data
//	...
//	end      0 u64 | xxhash64 of everything before it
//
// Messages come in sequence order; the holes between them, and the ones
// after the last message up to last, are deleted sequences. Messages
// removed by entries after index may be missing (the log replays those
// removals); none after last is included.
const (
	snapMagic   = "JWRS"
	snapVersion = 1
	snapHeader  = 4 + 4 + 8 + 8 + 8 + 8
)

type snapshot struct {
	st          *wal.Store
	index       uint64
	first, last uint64
	lastTS      int64
}

// Snapshot makes what is applied durable and marks it, then returns a
// snapshot: with a fetcher the stream's state (version 2, state.go), read
// here, else one that reads the store's messages as Persist runs.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	if err := f.resume(); err != nil {
		return nil, err
	}
	if f.failed != nil {
		return nil, f.failed
	}
	if err := f.settle(); err != nil {
		return nil, err
	}
	st := f.Store()
	if f.fetch != nil {
		if s, ok := stateOf(st, f.applied.Load(), f.seq, f.lastTS.Load()); ok {
			return &stateSnapshot{b: s.encode()}, nil
		}
	}
	s := st.State()
	return &snapshot{st: st, index: f.applied.Load(), first: s.FirstSeq, last: f.seq, lastTS: f.lastTS.Load()}, nil
}

// stateSnapshot is a version 2 snapshot, encoded.
type stateSnapshot struct{ b []byte }

func (s *stateSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s.b); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *stateSnapshot) Release() {}

// Persist writes the snapshot to sink.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) write(w io.Writer) error {
	h := xxhash.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 256<<10)
	le := binary.LittleEndian
	b := make([]byte, 0, 64<<10)
	b = append(b, snapMagic...)
	b = le.AppendUint32(b, snapVersion)
	b = le.AppendUint64(b, s.index)
	b = le.AppendUint64(b, s.first)
	b = le.AppendUint64(b, s.last)
	b = le.AppendUint64(b, uint64(s.lastTS))
	if _, err := bw.Write(b); err != nil {
		return err
	}
	var m store.Msg
	for seq := s.first; seq <= s.last; seq = m.Seq + 1 {
		err := s.st.LoadNext("", seq, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("stream: snapshot at index %d: read from sequence %d: %w", s.index, seq, err)
		}
		if m.Seq > s.last {
			break
		}
		b = AppendMsg(b[:0], &m)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	if _, err := bw.Write(le.AppendUint64(nil, 0)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(le.AppendUint64(nil, h.Sum64()))
	return err
}

// Release is a no-op: the snapshot holds nothing but the store it reads.
func (s *snapshot) Release() {}

// Restore brings the replica's store to the snapshot's and marks the
// snapshot's index applied. A version 1 snapshot replaces the store with
// its messages, at their sequences and times; a version 2 one (the state)
// is reconciled with the store, fetching only what it lacks (catchup.go).
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 256<<10)
	s, v2, err := peekState(br)
	if err != nil {
		return fmt.Errorf("stream: restore %s: %w", f.dir, err)
	}
	if v2 {
		return f.restoreState(s)
	}
	f.busy.Lock()
	defer f.busy.Unlock()
	index, last, lastTS, err := f.rebuild(br)
	if err != nil {
		return err
	}
	f.seq, f.have = last, last
	f.lastTS.Store(lastTS)
	f.applied.Store(index)
	f.sub = 0
	f.failed = nil
	if err := f.mw.write(mark{Index: index, LastSeq: last, LastTS: lastTS}); err != nil {
		return err
	}
	f.pmu.Lock()
	f.pending = nil
	f.pmu.Unlock()
	return f.dropPending()
}

// rebuild replaces the replica's store with the messages of the snapshot
// in rc and returns the snapshot's header; the FSM's state and mark are
// the caller's to set.
func (f *FSM) rebuild(rc io.Reader) (index, last uint64, lastTS int64, _ error) {
	h := xxhash.New()
	r := &hashReader{r: bufio.NewReaderSize(rc, 256<<10), h: h}
	le := binary.LittleEndian
	var hb [snapHeader]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return 0, 0, 0, fmt.Errorf("stream: restore %s: header: %w", f.dir, err)
	}
	if string(hb[:4]) != snapMagic || le.Uint32(hb[4:]) != snapVersion {
		return 0, 0, 0, fmt.Errorf("stream: restore %s: not a stream snapshot (magic %q version %d)", f.dir, hb[:4], le.Uint32(hb[4:]))
	}
	index, first, last, lastTS := le.Uint64(hb[8:]), le.Uint64(hb[16:]), le.Uint64(hb[24:]), int64(le.Uint64(hb[32:]))

	// The new store is built aside and swapped in only once complete.
	f.mu.Lock()
	err := f.st.Close()
	f.mu.Unlock()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("stream: restore %s: close store: %w", f.dir, err)
	}
	if err := f.fs.RemoveAll(f.storeDir()); err != nil {
		return 0, 0, 0, fmt.Errorf("stream: restore %s: %w", f.dir, err)
	}
	st, err := wal.Open(f.storeDir(), f.opts)
	if err != nil {
		return 0, 0, 0, err
	}
	fail := func(err error) (uint64, uint64, int64, error) {
		st.Close()
		f.failed = fmt.Errorf("stream: restore %s from the snapshot at index %d: %w", f.dir, index, err)
		return 0, 0, 0, f.failed
	}
	if err := st.SkipTo(first); err != nil {
		return fail(err)
	}
	var last8 [8]byte
	var done = make(chan error, 1)
	count := 0
	for {
		if _, err := io.ReadFull(r, last8[:]); err != nil {
			return fail(err)
		}
		seq := le.Uint64(last8[:])
		if seq == 0 {
			break
		}
		m, err := readMsg(r, seq)
		if err != nil {
			return fail(err)
		}
		if seq <= st.State().LastSeq || seq > last {
			return fail(fmt.Errorf("message %d out of order (last %d)", seq, last))
		}
		if err := st.SkipTo(seq); err != nil {
			return fail(err)
		}
		f.now.Store(m.Time)
		count++
		if err := st.AppendAsync(m.Subject, m.Header, m.Data, func(got uint64, _ int64, err error) {
			if err == nil && got != seq {
				err = fmt.Errorf("message %d stored as %d", seq, got)
			}
			if err != nil {
				select {
				case done <- err:
				default:
				}
			}
		}); err != nil {
			return fail(err)
		}
	}
	sum := h.Sum64()
	var tail [8]byte
	if _, err := io.ReadFull(r.r, tail[:]); err != nil {
		return fail(fmt.Errorf("checksum: %w", err))
	}
	if le.Uint64(tail[:]) != sum {
		return fail(fmt.Errorf("checksum mismatch: snapshot damaged"))
	}
	if err := st.SkipTo(last + 1); err != nil {
		return fail(err)
	}
	if err := st.Sync(); err != nil {
		return fail(err)
	}
	select {
	case err := <-done:
		return fail(err)
	default:
	}
	f.mu.Lock()
	f.st = st
	f.mu.Unlock()
	return index, last, lastTS, nil
}

// readMsg reads one message body after its sequence.
func readMsg(r *hashReader, seq uint64) (store.Msg, error) {
	m := store.Msg{Seq: seq}
	var t [8]byte
	if _, err := io.ReadFull(r, t[:]); err != nil {
		return m, err
	}
	m.Time = int64(binary.LittleEndian.Uint64(t[:]))
	field := func(what string) ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("message %d: %s length: %w", seq, what, err)
		}
		if n > 64<<20 {
			return nil, fmt.Errorf("message %d: %s of %d bytes", seq, what, n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("message %d: %s: %w", seq, what, err)
		}
		return b, nil
	}
	subj, err := field("subject")
	if err != nil {
		return m, err
	}
	m.Subject = string(subj)
	if m.Header, err = field("header"); err != nil {
		return m, err
	}
	if len(m.Header) == 0 {
		m.Header = nil
	}
	m.Data, err = field("data")
	return m, err
}

// hashReader hashes what it reads.
type hashReader struct {
	r *bufio.Reader
	h hash.Hash64
}

func (r *hashReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	return n, err
}

func (r *hashReader) ReadByte() (byte, error) {
	b, err := r.r.ReadByte()
	if err == nil {
		r.h.Write([]byte{b})
	}
	return b, err
}

// AppendMsg appends m in the message layout of version 1 snapshots, which
// the cluster's catch-up answers use too: seq u64 | time i64 | uvarint len
// | subject | uvarint len | header | uvarint len | data (little endian).
func AppendMsg(b []byte, m *store.Msg) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, m.Seq)
	b = le.AppendUint64(b, uint64(m.Time))
	b = binary.AppendUvarint(b, uint64(len(m.Subject)))
	b = append(b, m.Subject...)
	b = binary.AppendUvarint(b, uint64(len(m.Header)))
	b = append(b, m.Header...)
	b = binary.AppendUvarint(b, uint64(len(m.Data)))
	return append(b, m.Data...)
}
