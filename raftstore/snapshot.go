package raftstore

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/vfs"
)

// Encrypted snapshots.
//
// hashicorp/raft's FileSnapshotStore writes a snapshot as two files,
// <id>/meta.json (index, term, size, CRC-64 of the state, and the group's
// configuration: server ids and addresses) and <id>/state.bin (whatever
// the FSM's Persist wrote: the meta group's map, a stream's messages).
// SnapshotStore wraps any raft.SnapshotStore and seals the state stream:
// what the FSM writes is cut into chunks, each sealed by a data key of the
// snapshot directory's own (its key file, KeyFile, handled as raftlog's),
// and what Open returns is opened and authenticated chunk by chunk. The
// inner store sees only sealed bytes: its CRC and size cover them.
//
// Sealed state stream (little endian):
//
//	offset size field
//	0      4    magic "JWSE"
//	4      1    version (1)
//	5      1    cipher of the data key (crypt.Cipher)
//	6      2    reserved, zero
//	8      4    chunk size C: plaintext bytes per chunk
//	12     4    reserved, zero
//	16     16   random snapshot id, drawn per snapshot
//	32     ...  chunks: crypt's sealed value (nonce 24, ciphertext, tag 16)
//	            of C plaintext bytes each; the last holds 0 to C
//
// Each chunk's associated data is the 32-byte header, the snapshot's raft
// index and term (8 each, from its meta), the chunk number (8) and a final
// flag (1 byte: 1 for the last chunk, 0 before it). So a chunk moved to
// another position, another snapshot or another index does not open;
// dropping chunks from the end leaves a last chunk sealed as not final,
// which does not open either; appending chunks needs a final chunk that
// was not the last. The chunk count is derived from the stored size (which
// the inner store keeps): with n chunks, stored = 32 + plain + 40n, and
// every chunk but the last is exactly C + 40 bytes. A writer seals a full
// chunk only once a byte after it arrives, so the last chunk is the only
// one that may be short (or empty, for an empty snapshot), and is known to
// be the last when the sink is closed.
//
// Nonces: every sink seals in a crypt.Session of its own (a fresh random
// salt and a counter), so no two snapshots, before or after a crash, share
// a nonce.
//
// Sizes: Open and List report the plaintext size (raft sends a snapshot
// to a follower as meta.Size bytes of Open's reader, and checks that a
// sink took as many); List derives it with the current chunk size, Open
// with the header's.
//
// What stays clear: meta.json (the snapshot's index, term, sizes, CRC and
// the group's membership: server ids and addresses), the stream's header
// and the chunk boundaries (so the plaintext size, to within nothing).
const (
	snapSealMagic   = "JWSE"
	snapSealVersion = 1
	snapSealHeader  = 32
	// SnapshotChunk is the plaintext size of a sealed snapshot chunk.
	SnapshotChunk = 64 << 10
	maxSnapChunk  = 16 << 20
	snapADSize    = snapSealHeader + 8 + 8 + 8 + 1
)

// KeyFile is the key file of an encrypted snapshot directory (and of a
// raft log: raftlog.KeyFile).
const KeyFile = raftlog.KeyFile

// SnapshotOptions configures WrapSnapshots.
type SnapshotOptions struct {
	// FS holds the key file; nil means the operating system's.
	FS vfs.FS
	// Encryption is the configured key. The zero value seals nothing,
	// unless the directory already has a key file: then the store is
	// refused (ErrKeyMismatch), never read as plain.
	Encryption crypt.Config
}

// SnapshotStore is a raft.SnapshotStore that seals the snapshots of the
// store it wraps (see above). With no key it passes everything through.
type SnapshotStore struct {
	inner        raft.SnapshotStore
	dir          string
	key          *crypt.DataKey
	plainWithKey bool
	rewrapped    bool
}

var _ raft.SnapshotStore = (*SnapshotStore)(nil)

// WrapSnapshots wraps inner, whose files are under dir (the base directory
// given to raft.NewFileSnapshotStore), deciding from dir's key file as
// raftlog.Open does for a log:
//
//   - key file present, key configured: it must open with Key or PrevKey
//     (with PrevKey it is rewrapped with Key, atomically); neither opens it,
//     or no key is configured: an error naming dir and wrapping
//     ErrKeyMismatch, and nothing is changed;
//   - no key file, key configured, no snapshot yet: a data key is drawn
//     and the key file written;
//   - no key file, key configured, snapshots written in the clear: they
//     stay in the clear (PlainWithKey), as does every later one;
//   - no key file, no key: plain, as before.
func WrapSnapshots(inner raft.SnapshotStore, dir string, opts SnapshotOptions) (*SnapshotStore, error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.Default
	}
	cfg := opts.Encryption
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("raftstore: snapshots %s: %w", dir, err)
	}
	s := &SnapshotStore{inner: inner, dir: dir}
	path := filepath.Join(dir, KeyFile)
	_, statErr := fsys.Stat(path)
	_ = fsys.Remove(path + ".tmp") // an interrupted rewrap: the key file is whole
	switch {
	case statErr == nil && !cfg.Enabled():
		return nil, fmt.Errorf("raftstore: snapshots %s are encrypted (%s) and no encryption key is configured: %w", dir, KeyFile, ErrKeyMismatch)
	case statErr == nil:
		dk, rewrap, err := crypt.ReadKeyFile(fsys, path, cfg)
		if err != nil {
			if errors.Is(err, crypt.ErrKeyMismatch) {
				return nil, fmt.Errorf("raftstore: snapshots %s: the encryption key does not match (neither key nor prev_key opens %s): %w", dir, KeyFile, ErrKeyMismatch)
			}
			return nil, fmt.Errorf("raftstore: snapshots %s: %w", dir, err)
		}
		if rewrap {
			if err := crypt.WriteKeyFile(fsys, path, dk, cfg.Key); err != nil {
				return nil, fmt.Errorf("raftstore: snapshots %s: rewrap the data key with the new key: %w", dir, err)
			}
			s.rewrapped = true
		}
		s.key = dk
		return s, nil
	case !errors.Is(statErr, fs.ErrNotExist):
		return nil, fmt.Errorf("raftstore: snapshots %s: %w", dir, statErr)
	case !cfg.Enabled():
		return s, nil
	}
	snaps, err := inner.List()
	if err != nil {
		return nil, fmt.Errorf("raftstore: snapshots %s: %w", dir, err)
	}
	if len(snaps) > 0 {
		s.plainWithKey = true
		return s, nil
	}
	dk, err := cfg.NewKey()
	if err != nil {
		return nil, fmt.Errorf("raftstore: snapshots %s: %w", dir, err)
	}
	if err := crypt.WriteKeyFile(fsys, path, dk, cfg.Key); err != nil {
		return nil, fmt.Errorf("raftstore: snapshots %s: %w", dir, err)
	}
	s.key = dk
	return s, nil
}

// ErrKeyMismatch is wrapped by the errors of a store whose key file the
// configured keys do not open (crypt.ErrKeyMismatch).
var ErrKeyMismatch = crypt.ErrKeyMismatch

// Encrypted reports whether new snapshots are sealed.
func (s *SnapshotStore) Encrypted() bool { return s.key != nil }

// PlainWithKey reports that a key is configured but the directory held
// snapshots written in the clear before, so it stays in the clear.
func (s *SnapshotStore) PlainWithKey() bool { return s.plainWithKey }

// Rewrapped reports that the key file opened with PrevKey and was written
// again wrapped by Key.
func (s *SnapshotStore) Rewrapped() bool { return s.rewrapped }

// Create implements raft.SnapshotStore.
func (s *SnapshotStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	if s.key == nil {
		return s.inner.Create(version, index, term, configuration, configurationIndex, trans)
	}
	sess, err := s.key.NewSession()
	if err != nil {
		return nil, fmt.Errorf("raftstore: snapshot: %w", err)
	}
	inner, err := s.inner.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	k := &sealSink{inner: inner, sess: sess, index: index, term: term}
	copy(k.hdr[:], snapSealMagic)
	k.hdr[4] = snapSealVersion
	k.hdr[5] = byte(s.key.Cipher())
	binary.LittleEndian.PutUint32(k.hdr[8:], SnapshotChunk)
	if _, err := rand.Read(k.hdr[16:32]); err != nil {
		_ = inner.Cancel()
		return nil, fmt.Errorf("raftstore: snapshot id: %w", err)
	}
	if _, err := inner.Write(k.hdr[:]); err != nil {
		_ = inner.Cancel()
		return nil, err
	}
	return k, nil
}

// List implements raft.SnapshotStore, with each size the plaintext's.
func (s *SnapshotStore) List() ([]*raft.SnapshotMeta, error) {
	metas, err := s.inner.List()
	if err != nil || s.key == nil {
		return metas, err
	}
	out := make([]*raft.SnapshotMeta, len(metas))
	for i, m := range metas {
		c := *m
		if n, err := plainSize(m.Size, SnapshotChunk); err == nil {
			c.Size = n
		}
		out[i] = &c
	}
	return out, nil
}

// Open implements raft.SnapshotStore: the reader returns the plaintext,
// each chunk authenticated before any of its bytes is returned. A chunk
// that does not open, a bad header or a stream of the wrong length is an
// error wrapping raftlog.ErrCorrupt naming the snapshot.
func (s *SnapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	meta, rc, err := s.inner.Open(id)
	if err != nil || s.key == nil {
		return meta, rc, err
	}
	fail := func(format string, args ...any) (*raft.SnapshotMeta, io.ReadCloser, error) {
		rc.Close()
		return nil, nil, fmt.Errorf("raftstore: snapshot %s in %s: %s: %w", id, s.dir, fmt.Sprintf(format, args...), raftlog.ErrCorrupt)
	}
	r := &openReader{inner: rc, key: s.key, index: meta.Index, term: meta.Term, id: id}
	if _, err := io.ReadFull(rc, r.hdr[:]); err != nil {
		return fail("header: %v", err)
	}
	if string(r.hdr[:4]) != snapSealMagic || r.hdr[4] != snapSealVersion {
		return fail("not a sealed snapshot (magic %q, version %d)", r.hdr[:4], r.hdr[4])
	}
	chunk := int64(binary.LittleEndian.Uint32(r.hdr[8:]))
	if chunk < 1 || chunk > maxSnapChunk {
		return fail("chunk size %d", chunk)
	}
	plain, err := plainSize(meta.Size, chunk)
	if err != nil {
		return fail("%v", err)
	}
	r.chunk = int(chunk)
	r.chunks = chunkCount(meta.Size, chunk)
	r.lastLen = int(meta.Size - snapSealHeader - (r.chunks-1)*(chunk+crypt.Overhead))
	m := *meta
	m.Size = plain
	return &m, r, nil
}

// chunkCount is the number of chunks of a sealed stream of size bytes.
func chunkCount(size, chunk int64) int64 {
	t := size - snapSealHeader
	return (t + chunk + crypt.Overhead - 1) / (chunk + crypt.Overhead)
}

// plainSize is the plaintext size of a sealed stream of size bytes.
func plainSize(size, chunk int64) (int64, error) {
	t := size - snapSealHeader
	if t < crypt.Overhead {
		return 0, fmt.Errorf("sealed stream of %d bytes is too short", size)
	}
	n := chunkCount(size, chunk)
	if last := t - (n-1)*(chunk+crypt.Overhead); last < crypt.Overhead {
		return 0, fmt.Errorf("sealed stream of %d bytes: last chunk of %d bytes", size, last)
	}
	return t - n*crypt.Overhead, nil
}

// chunkAD is the associated data of chunk i.
func chunkAD(ad *[snapADSize]byte, hdr *[snapSealHeader]byte, index, term uint64, i int64, final bool) []byte {
	copy(ad[:], hdr[:])
	binary.LittleEndian.PutUint64(ad[snapSealHeader:], index)
	binary.LittleEndian.PutUint64(ad[snapSealHeader+8:], term)
	binary.LittleEndian.PutUint64(ad[snapSealHeader+16:], uint64(i))
	ad[snapSealHeader+24] = 0
	if final {
		ad[snapSealHeader+24] = 1
	}
	return ad[:]
}

// sealSink seals what it is given into the inner sink, chunk by chunk.
type sealSink struct {
	inner       raft.SnapshotSink
	sess        *crypt.Session
	hdr         [snapSealHeader]byte
	index, term uint64
	buf         []byte // pending plaintext, at most SnapshotChunk bytes
	out         []byte // sealed chunk buffer
	n           int64  // chunks sealed
	err         error  // sticky
	done        bool
}

func (k *sealSink) ID() string { return k.inner.ID() }

// Write implements io.Writer. A chunk is sealed once more than a chunk's
// worth is pending, so that the last chunk is known at Close.
func (k *sealSink) Write(p []byte) (int, error) {
	if k.err != nil {
		return 0, k.err
	}
	if k.done {
		return 0, errors.New("raftstore: write to a closed snapshot sink")
	}
	if k.buf == nil {
		k.buf = make([]byte, 0, SnapshotChunk)
	}
	n := len(p)
	for len(p) > 0 {
		if len(k.buf) == SnapshotChunk {
			// More bytes follow a full chunk: it is not the last.
			if err := k.seal(k.buf, false); err != nil {
				return n - len(p), err
			}
			k.buf = k.buf[:0]
		}
		take := min(SnapshotChunk-len(k.buf), len(p))
		k.buf = append(k.buf, p[:take]...)
		p = p[take:]
	}
	return n, nil
}

func (k *sealSink) seal(plain []byte, final bool) error {
	var ad [snapADSize]byte
	out, err := k.sess.Seal(k.out[:0], plain, chunkAD(&ad, &k.hdr, k.index, k.term, k.n, final))
	if err != nil {
		k.err = fmt.Errorf("raftstore: seal snapshot chunk %d: %w", k.n, err)
		return k.err
	}
	k.out = out
	if _, err := k.inner.Write(out); err != nil {
		k.err = err
		return err
	}
	k.n++
	return nil
}

// Close seals the pending bytes as the final chunk and closes the inner
// sink. After a failed write it cancels the inner sink instead.
func (k *sealSink) Close() error {
	if k.done {
		return nil
	}
	k.done = true
	if k.err != nil {
		_ = k.inner.Cancel()
		return k.err
	}
	if err := k.seal(k.buf, true); err != nil {
		_ = k.inner.Cancel()
		return err
	}
	clear(k.buf)
	return k.inner.Close()
}

// Cancel implements raft.SnapshotSink.
func (k *sealSink) Cancel() error {
	k.done = true
	clear(k.buf)
	return k.inner.Cancel()
}

// openReader opens a sealed stream chunk by chunk.
type openReader struct {
	inner       io.ReadCloser
	key         *crypt.DataKey
	hdr         [snapSealHeader]byte
	index, term uint64
	id          string
	chunk       int
	chunks      int64 // chunks in the stream
	lastLen     int   // stored size of the last chunk
	next        int64 // next chunk to open
	sealed      []byte
	plain       []byte // opened, not yet returned: plain[pos:]
	pos         int
	err         error
}

func (r *openReader) Read(p []byte) (int, error) {
	for r.pos == len(r.plain) {
		if r.err != nil {
			return 0, r.err
		}
		if r.next == r.chunks {
			// Nothing may follow the final chunk.
			var one [1]byte
			if n, _ := io.ReadFull(r.inner, one[:]); n > 0 {
				r.err = r.corrupt("bytes after the final chunk")
				return 0, r.err
			}
			r.err = io.EOF
			return 0, io.EOF
		}
		final := r.next == r.chunks-1
		size := r.chunk + crypt.Overhead
		if final {
			size = r.lastLen
		}
		if cap(r.sealed) < size {
			r.sealed = make([]byte, size)
		}
		r.sealed = r.sealed[:size]
		if _, err := io.ReadFull(r.inner, r.sealed); err != nil {
			r.err = r.corrupt(fmt.Sprintf("chunk %d: %v", r.next, err))
			return 0, r.err
		}
		var ad [snapADSize]byte
		plain, err := r.key.Open(r.plain[:0], r.sealed, chunkAD(&ad, &r.hdr, r.index, r.term, r.next, final))
		if err != nil {
			r.err = r.corrupt(fmt.Sprintf("chunk %d does not authenticate (tampered, reordered, truncated, or another key)", r.next))
			return 0, r.err
		}
		r.plain, r.pos = plain, 0
		r.next++
	}
	n := copy(p, r.plain[r.pos:])
	r.pos += n
	return n, nil
}

func (r *openReader) corrupt(why string) error {
	return fmt.Errorf("raftstore: snapshot %s: %s: %w", r.id, why, raftlog.ErrCorrupt)
}

func (r *openReader) Close() error {
	clear(r.plain)
	return r.inner.Close()
}
