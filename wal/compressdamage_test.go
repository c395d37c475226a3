package wal

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jetwal/jetwal/segment"
)

// fillSize is the payload of openFilled's messages.
const fillSize = 1000

// openFilled opens a store in dir and appends n messages of fillSize bytes
// on subject "a"; it returns the store, its two newest segments and the
// last sequence.
func openFilled(t *testing.T, dir string, opts Options, n int) (s *Store, newest, prev *segment.Segment, last uint64) {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, fillSize)
	for i := 0; i < n; i++ {
		if last, _, err = s.Append("a", nil, data); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.segs) < 2 {
		t.Fatalf("%d messages filled %d segment(s), want at least 2", n, len(s.segs))
	}
	return s, s.segs[len(s.segs)-1].seg, s.segs[len(s.segs)-2].seg, last
}

// closeAsNeverWritten closes s and leaves its directory as a crash right
// after a roll can: no checkpoint, and the newest segment's file (newest)
// all zeros, its header and records never written back.
func closeAsNeverWritten(t *testing.T, s *Store, dir, newest string) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, checkpointFile)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(newest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newest, make([]byte, fi.Size()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A crash can leave a compressed segment the newest on disk: the segment
// after it was created, but its header never reached the disk, and
// recovery removes the empty file. If that compressed segment's body does
// not decode either, its messages are lost, and the removed file's name
// (the base of the segment after it) says how far they went: the store
// opens, reports them lost and the damaged file, and hands out sequences
// from that base on, never one of the lost ones. (FuzzRecover found the
// store refused to open instead.)
func TestNewestCompressedSegmentUndecodable(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Sync: SyncAlways, SegmentSize: 4096, FirstSegmentSize: 4096, Compress: true, CheckpointEvery: -1}
	s, newest, prev, last := openFilled(t, dir, opts, 9)
	newestPath, newestBase := newest.Path(), newest.Base()
	if !prev.Compressed() || newestBase > last {
		t.Fatalf("want the segment before the newest compressed and the newest holding messages: compressed %v, newest base %d, last %d", prev.Compressed(), newestBase, last)
	}
	prevPath, prevBase := prev.Path(), prev.Base()
	// The crash, and bit rot in the compressed body.
	closeAsNeverWritten(t, s, dir, newestPath)
	b, err := os.ReadFile(prevPath)
	if err != nil {
		t.Fatal(err)
	}
	b[segment.HeaderSize] ^= 0xff // the S2 block's length: nothing decodes
	if err := os.WriteFile(prevPath, b, 0o644); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, opts)
	if err != nil {
		t.Fatalf("open after the crash: %v", err)
	}
	defer s.Close()
	named := false
	for _, c := range s.Recovery().Corrupt {
		named = named || c.File == prevPath
	}
	if !named {
		t.Errorf("recovery does not name %s: %+v", prevPath, s.Recovery().Corrupt)
	}
	st := s.State()
	if st.Lost == nil {
		t.Fatal("no messages reported lost")
	}
	for q := prevBase; q < newestBase; q++ {
		if !slices.Contains(st.Lost.Msgs, q) {
			t.Errorf("sequence %d of the damaged segment not reported lost: %v", q, st.Lost.Msgs)
		}
	}
	if st.LastSeq != newestBase-1 {
		t.Errorf("LastSeq %d, want %d (the removed segment's base less one)", st.LastSeq, newestBase-1)
	}
	seq, _, err := s.Append("a", nil, []byte("after"))
	if err != nil {
		t.Fatal(err)
	}
	if seq != newestBase {
		t.Errorf("first append after recovery got sequence %d, want %d", seq, newestBase)
	}
}

// The base of a newest segment removed as never written bounds the
// sequences handed out before it even when nothing after recovery's scan
// says so: with the segment before it cut short (its last records never
// written back), the next append still gets that base, not the sequence of
// a message that was handed out and lost.
func TestNeverWrittenSegmentBaseIsNotReused(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Sync: SyncAlways, SegmentSize: 4096, FirstSegmentSize: 4096, CheckpointEvery: -1}
	s, newest, prev, _ := openFilled(t, dir, opts, 5)
	newestPath, newestBase := newest.Path(), newest.Base()
	prevPath, prevEnd := prev.Path(), prev.Flushed()
	closeAsNeverWritten(t, s, dir, newestPath)
	// Cut the last record of the segment before it (and the zeroed
	// tail after it): one message handed out, then lost.
	rec := int64(segment.EncodedSize(len("a"), 0, fillSize))
	if err := os.Truncate(prevPath, prevEnd-rec); err != nil {
		t.Fatal(err)
	}

	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.State(); st.LastSeq != newestBase-1 {
		t.Errorf("LastSeq %d, want %d", st.LastSeq, newestBase-1)
	}
	seq, _, err := s.Append("a", nil, []byte("after"))
	if err != nil {
		t.Fatal(err)
	}
	if seq != newestBase {
		t.Errorf("first append after recovery got sequence %d, want %d (sequence %d was handed out before)", seq, newestBase, newestBase-1)
	}
}
