package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/internal/diskgrep"
	"github.com/jetwal/jetwal/raftlog"
)

var snapKey = crypt.Config{Key: "snapshot test key"}

// memSnaps is an in-memory raft.SnapshotStore whose stored bytes a test
// can change (raft's own checks nothing: what the wrapper must catch).
type memSnaps struct {
	metas map[string]*raft.SnapshotMeta
	data  map[string][]byte
	n     int
}

func newMemSnaps() *memSnaps {
	return &memSnaps{metas: map[string]*raft.SnapshotMeta{}, data: map[string][]byte{}}
}

type memSink struct {
	s   *memSnaps
	id  string
	buf bytes.Buffer
	m   raft.SnapshotMeta
}

func (m *memSnaps) Create(v raft.SnapshotVersion, index, term uint64, c raft.Configuration, ci uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	m.n++
	return &memSink{s: m, id: fmt.Sprintf("snap-%d", m.n), m: raft.SnapshotMeta{Version: v, ID: fmt.Sprintf("snap-%d", m.n), Index: index, Term: term, Configuration: c, ConfigurationIndex: ci}}, nil
}

func (m *memSnaps) List() ([]*raft.SnapshotMeta, error) {
	var out []*raft.SnapshotMeta
	for _, v := range m.metas {
		c := *v
		out = append(out, &c)
	}
	return out, nil
}

func (m *memSnaps) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	meta, ok := m.metas[id]
	if !ok {
		return nil, nil, fmt.Errorf("no snapshot %s", id)
	}
	c := *meta
	c.Size = int64(len(m.data[id]))
	return &c, io.NopCloser(bytes.NewReader(m.data[id])), nil
}

func (k *memSink) Write(p []byte) (int, error) { return k.buf.Write(p) }
func (k *memSink) ID() string                  { return k.id }
func (k *memSink) Cancel() error               { return nil }
func (k *memSink) Close() error {
	k.m.Size = int64(k.buf.Len())
	k.s.metas[k.id] = &k.m
	k.s.data[k.id] = k.buf.Bytes()
	return nil
}

// snapPayload is n bytes holding a known word again and again.
func snapPayload(n int) []byte {
	w := []byte("snapshot-secret-value;")
	b := make([]byte, n)
	for i := range b {
		b[i] = w[i%len(w)]
	}
	return b
}

func writeSnap(t *testing.T, s raft.SnapshotStore, index uint64, p []byte, pieces int) string {
	t.Helper()
	sink, err := s.Create(1, index, 3, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	step := max(1, len(p)/max(pieces, 1))
	for off := 0; off < len(p); off += step {
		if _, err := sink.Write(p[off:min(len(p), off+step)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return sink.ID()
}

func readSnap(s raft.SnapshotStore, id string) (*raft.SnapshotMeta, []byte, error) {
	meta, rc, err := s.Open(id)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return meta, b, err
}

// TestSealedSnapshotRoundTrip writes snapshots of sizes around the chunk
// size through the wrapper over raft's FileSnapshotStore, in pieces of
// several sizes: each reads back whole with its plaintext size in Open and
// List, and no file under the directory holds the known value.
func TestSealedSnapshotRoundTrip(t *testing.T) {
	for _, c := range []crypt.Cipher{crypt.ChaCha, crypt.AES} {
		dir := t.TempDir()
		inner, err := raft.NewFileSnapshotStore(dir, 100, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		s, err := WrapSnapshots(inner, dir, SnapshotOptions{Encryption: crypt.Config{Key: "k", Cipher: c}})
		if err != nil {
			t.Fatal(err)
		}
		if !s.Encrypted() {
			t.Fatal("not encrypted")
		}
		sizes := []int{0, 1, 100, SnapshotChunk - 1, SnapshotChunk, SnapshotChunk + 1, 2 * SnapshotChunk, 3*SnapshotChunk + 17}
		ids := map[string]int{}
		for i, n := range sizes {
			ids[writeSnap(t, s, uint64(10+i), snapPayload(n), 1+i%4*7)] = n
		}
		metas, err := s.List()
		if err != nil || len(metas) != len(sizes) {
			t.Fatalf("List: %d, %v", len(metas), err)
		}
		for _, m := range metas {
			if m.Size != int64(ids[m.ID]) {
				t.Fatalf("List size of %s = %d, want %d", m.ID, m.Size, ids[m.ID])
			}
		}
		for id, n := range ids {
			meta, b, err := readSnap(s, id)
			if err != nil {
				t.Fatalf("%v: read %s (%d bytes): %v", c, id, n, err)
			}
			if meta.Size != int64(n) || !bytes.Equal(b, snapPayload(n)) {
				t.Fatalf("%v: %s read %d bytes (meta %d), want %d", c, id, len(b), meta.Size, n)
			}
		}
		if hits := diskgrep.Find(t, dir, "snapshot-secret-value"); len(hits) > 0 {
			t.Fatalf("plain text on disk: %v", hits)
		}
	}
	// The same through a plain store finds the word: the search works.
	dir := t.TempDir()
	inner, _ := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	s, err := WrapSnapshots(inner, dir, SnapshotOptions{})
	if err != nil || s.Encrypted() {
		t.Fatalf("plain wrap: %v", err)
	}
	writeSnap(t, s, 1, snapPayload(1000), 1)
	if hits := diskgrep.Find(t, dir, "snapshot-secret-value"); len(hits) == 0 {
		t.Fatal("the plain snapshot holds no known value: the search is broken")
	}
}

// TestSealedSnapshotTamper changes a sealed snapshot's stored bytes in
// every way that keeps it a plausible stream: a flipped byte, two chunks
// swapped, the last chunk dropped (a truncation at a chunk boundary), a
// chunk appended, a chunk from another snapshot, the header's chunk size,
// the meta's index. Each is an error wrapping ErrCorrupt, from Open or
// before the reader reaches EOF.
func TestSealedSnapshotTamper(t *testing.T) {
	const chunk = SnapshotChunk + crypt.Overhead
	n := 3*SnapshotChunk + 100
	cases := []struct {
		name string
		edit func(b, other []byte, m *raft.SnapshotMeta) []byte
	}{
		{"flip", func(b, _ []byte, _ *raft.SnapshotMeta) []byte { b[snapSealHeader+chunk+100] ^= 1; return b }},
		{"swap", func(b, _ []byte, _ *raft.SnapshotMeta) []byte {
			x := snapSealHeader
			c0 := append([]byte(nil), b[x:x+chunk]...)
			copy(b[x:], b[x+chunk:x+2*chunk])
			copy(b[x+chunk:], c0)
			return b
		}},
		{"drop last", func(b, _ []byte, _ *raft.SnapshotMeta) []byte { return b[:snapSealHeader+3*chunk] }},
		{"drop two", func(b, _ []byte, _ *raft.SnapshotMeta) []byte { return b[:snapSealHeader+2*chunk] }},
		{"append", func(b, _ []byte, _ *raft.SnapshotMeta) []byte {
			return append(b[:len(b):len(b)], b[snapSealHeader:snapSealHeader+chunk]...)
		}},
		{"other's chunk", func(b, o []byte, _ *raft.SnapshotMeta) []byte {
			copy(b[snapSealHeader+chunk:], o[snapSealHeader+chunk:snapSealHeader+2*chunk])
			return b
		}},
		{"other's header", func(b, o []byte, _ *raft.SnapshotMeta) []byte { copy(b, o[:snapSealHeader]); return b }},
		{"chunk size", func(b, _ []byte, _ *raft.SnapshotMeta) []byte { b[8]++; return b }},
		{"index", func(b, _ []byte, m *raft.SnapshotMeta) []byte { m.Index++; return b }},
		{"term", func(b, _ []byte, m *raft.SnapshotMeta) []byte { m.Term++; return b }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inner := newMemSnaps()
			s, err := WrapSnapshots(inner, t.TempDir(), SnapshotOptions{Encryption: snapKey})
			if err != nil {
				t.Fatal(err)
			}
			id := writeSnap(t, s, 7, snapPayload(n), 5)
			other := writeSnap(t, s, 7, snapPayload(n), 5)
			if _, b, err := readSnap(s, id); err != nil || len(b) != n {
				t.Fatalf("untouched: %d bytes, %v", len(b), err)
			}
			inner.data[id] = tc.edit(inner.data[id], inner.data[other], inner.metas[id])
			_, b, err := readSnap(s, id)
			if !errors.Is(err, raftlog.ErrCorrupt) || !strings.Contains(err.Error(), id) {
				t.Fatalf("tampered (%s): %d bytes read, err %v", tc.name, len(b), err)
			}
		})
	}
}

// TestSealedSnapshotKeys: a wrong key or none refuses the directory naming
// it and changes nothing; prev_key rewraps; a directory with plain
// snapshots stays plain with a key.
func TestSealedSnapshotKeys(t *testing.T) {
	dir := t.TempDir()
	inner, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := WrapSnapshots(inner, dir, SnapshotOptions{Encryption: snapKey})
	if err != nil {
		t.Fatal(err)
	}
	id := writeSnap(t, s, 5, snapPayload(5000), 3)
	keyBytes, err := os.ReadFile(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []crypt.Config{{Key: "wrong"}, {}, {Key: "wrong", PrevKey: "wrong too"}} {
		_, err := WrapSnapshots(inner, dir, SnapshotOptions{Encryption: bad})
		if !errors.Is(err, ErrKeyMismatch) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("wrap with %+v: %v", bad, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, KeyFile)); !bytes.Equal(b, keyBytes) {
			t.Fatalf("wrap with %+v changed the key file", bad)
		}
	}
	rot, err := WrapSnapshots(inner, dir, SnapshotOptions{Encryption: crypt.Config{Key: "new", PrevKey: snapKey.Key}})
	if err != nil || !rot.Rewrapped() {
		t.Fatalf("rotation: %v", err)
	}
	if _, b, err := readSnap(rot, id); err != nil || !bytes.Equal(b, snapPayload(5000)) {
		t.Fatalf("read after rotation: %v", err)
	}
	if _, err := WrapSnapshots(inner, dir, SnapshotOptions{Encryption: snapKey}); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("old key after rotation: %v", err)
	}
	if s, err := WrapSnapshots(inner, dir, SnapshotOptions{Encryption: crypt.Config{Key: "new"}}); err != nil || s.Rewrapped() {
		t.Fatalf("new key after rotation: %v", err)
	}

	plainDir := t.TempDir()
	pin, _ := raft.NewFileSnapshotStore(plainDir, 2, io.Discard)
	p, _ := WrapSnapshots(pin, plainDir, SnapshotOptions{})
	pid := writeSnap(t, p, 5, snapPayload(100), 1)
	pk, err := WrapSnapshots(pin, plainDir, SnapshotOptions{Encryption: snapKey})
	if err != nil || pk.Encrypted() || !pk.PlainWithKey() {
		t.Fatalf("plain snapshots with a key: %v", err)
	}
	if _, b, err := readSnap(pk, pid); err != nil || !bytes.Equal(b, snapPayload(100)) {
		t.Fatalf("plain snapshot read: %v", err)
	}
	if _, err := os.Stat(filepath.Join(plainDir, KeyFile)); !os.IsNotExist(err) {
		t.Fatalf("key file beside plain snapshots: %v", err)
	}
}
