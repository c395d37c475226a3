package wal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/internal/diskgrep"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

var secrets = []string{"topsecret-subject", "X-Hidden-Header", "hunter2-payload-value"}

func writeSecrets(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := range n {
		subj := fmt.Sprintf("orders.%s.%d", secrets[0], i%5)
		hdr := []byte("NATS/1.0\r\n" + secrets[1] + ": v\r\n\r\n")
		data := []byte(fmt.Sprintf("%s-%05d", secrets[2], i))
		if _, _, err := s.Append(subj, hdr, data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEncryptedNoPlaintext writes known subjects, header values and
// payloads into an encrypted store (rolls, compressed sealed segments,
// checkpoints, a delete, a reopen) and finds none of them in any file
// under its directory; the same writes in a plain store are found, so the
// search works.
func TestEncryptedNoPlaintext(t *testing.T) {
	for _, enc := range []crypt.Config{{}, {Key: "k", Cipher: crypt.ChaCha}, {Key: "k", Cipher: crypt.AES}} {
		t.Run(enc.Cipher.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			opts := Options{Sync: SyncNever, SegmentSize: 16 << 10, Compress: true, Encryption: enc}
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			writeSecrets(t, s, 800)
			if err := s.Delete(3, true); err != nil { // an erase
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = Open(dir, opts); err != nil {
				t.Fatal(err)
			}
			writeSecrets(t, s, 50)
			var m store.Msg
			if err := s.Load(10, &m); err != nil || !strings.Contains(string(m.Data), secrets[2]) {
				t.Fatalf("load: %v %q", err, m.Data)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			hits := diskgrep.Find(t, dir, secrets...)
			if enc.Enabled() && len(hits) > 0 {
				t.Fatalf("plain text on disk: %v", hits)
			}
			if !enc.Enabled() && len(hits) == 0 {
				t.Fatal("the search found nothing in a plain store")
			}
		})
	}
}

// TestEncryptedTamper flips a ciphertext byte of a sealed (and a
// compressed) segment, with its checksum recomputed so only the tag can
// tell: the damage is reported with file and offset, the message is never
// served, and the others are.
func TestEncryptedTamper(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	opts := Options{Sync: SyncNever, SegmentSize: 8 << 10, Encryption: crypt.Config{Key: "k"}, CheckpointEvery: -1}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	writeSecrets(t, s, 300)
	s.Close()
	os.Remove(filepath.Join(dir, checkpointFile)) // recovery scans every record
	files, _ := segmentFiles(vfs.Default, dir)
	if len(files) < 3 {
		t.Fatalf("%d segments", len(files))
	}
	path := files[0].path
	off := tamperSealed(t, path, 2)
	s, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep := s.Recovery()
	if len(rep.Corrupt) != 1 || rep.Corrupt[0].File != path || rep.Corrupt[0].Offset != off || !strings.Contains(rep.Corrupt[0].Error(), "authentication") {
		t.Fatalf("report: %+v", rep.Corrupt)
	}
	var m store.Msg
	if err := s.Load(2, &m); !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("tampered message served: %v %q", err, m.Data)
	}
	for _, q := range []uint64{1, 3, 300} {
		if err := s.Load(q, &m); err != nil || !strings.HasSuffix(string(m.Data), fmt.Sprintf("%05d", q-1)) {
			t.Fatalf("load %d: %v %q", q, err, m.Data)
		}
	}
	if lost := s.State().Lost; lost == nil || fmt.Sprint(lost.Msgs) != "[2]" {
		t.Fatalf("lost: %+v", lost)
	}
}

// TestEncryptedReadTamper: bit rot found by a read after recovery (the
// tag fails on a byte changed while the store is open) is reported and
// never served.
func TestEncryptedReadTamper(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d", 0o755)
	s, err := Open("/d/s", Options{FS: fs, Sync: SyncNever, Encryption: crypt.Config{Key: "k", Cipher: crypt.AES}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeSecrets(t, s, 20)
	s.Sync()
	files, _ := segmentFiles(fs, "/d/s")
	f, _ := fs.OpenRW(files[0].path)
	loc, _ := s.idx.Seqs.Lookup(7)
	b := make([]byte, 4)
	f.ReadAt(b, int64(loc.Off))
	l := int64(binary.LittleEndian.Uint32(b))
	rec := make([]byte, l)
	f.ReadAt(rec, int64(loc.Off))
	rec[60] ^= 1
	binary.LittleEndian.PutUint64(rec[l-8:], xxhash.Sum64(rec[:l-8]))
	f.WriteAt(rec, int64(loc.Off))
	f.Close()
	var m store.Msg
	err = s.Load(7, &m)
	var ce *segment.CorruptError
	if !errors.Is(err, store.ErrCorrupt) || !errors.As(err, &ce) || ce.Offset != int64(loc.Off) {
		t.Fatalf("tampered read: %v", err)
	}
}

// snapshot is every file of dir and its bytes.
func snapshot(t *testing.T, fs vfs.FS, dir string) map[string]string {
	t.Helper()
	names, err := fs.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		f, err := fs.Open(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		size, _ := f.Size()
		b := make([]byte, size)
		f.ReadAt(b, 0)
		f.Close()
		out[n] = string(b)
	}
	return out
}

func checkAll(t *testing.T, s *Store, n int) {
	t.Helper()
	var m store.Msg
	for q := 1; q <= n; q++ {
		if err := s.Load(uint64(q), &m); err != nil || string(m.Data) != fmt.Sprintf("%s-%05d", secrets[2], q-1) {
			t.Fatalf("message %d: %v %q", q, err, m.Data)
		}
	}
	if st := s.State(); st.Msgs != uint64(n) {
		t.Fatalf("%d messages, want %d", st.Msgs, n)
	}
}

// TestEncryptedWrongKey: a wrong or missing key refuses the store with an
// error naming it, changes no file, and the right key brings every message
// back. A key configured for a store written in the clear keeps it plain
// and says so.
func TestEncryptedWrongKey(t *testing.T) {
	fs := vfs.NewMemFS()
	fs.MkdirAll("/d", 0o755)
	dir := "/d/s"
	good := Options{FS: fs, Sync: SyncNever, SegmentSize: 8 << 10, Encryption: crypt.Config{Key: "right"}}
	s, err := Open(dir, good)
	if err != nil {
		t.Fatal(err)
	}
	writeSecrets(t, s, 200)
	s.Close()
	before := snapshot(t, fs, dir)
	for name, enc := range map[string]crypt.Config{
		"wrong":      {Key: "wrong"},
		"wrong+prev": {Key: "wrong", PrevKey: "also wrong"},
		"none":       {},
	} {
		o := good
		o.Encryption = enc
		_, err := Open(dir, o)
		if !errors.Is(err, ErrKeyMismatch) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("%s: %v", name, err)
		}
		if name != "none" && !strings.Contains(err.Error(), "does not match") {
			t.Fatalf("%s: %v", name, err)
		}
		after := snapshot(t, fs, dir)
		delete(after, lockFile)
		delete(before, lockFile)
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%s: files changed", name)
		}
	}
	// The key file gone: the encrypted segments refuse the store, and
	// nothing is set aside.
	kf := snapshot(t, fs, dir)[keyFile]
	fs.Remove(filepath.Join(dir, keyFile))
	if _, err := Open(dir, Options{FS: fs, Sync: SyncNever}); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("no key file, no key: %v", err)
	}
	if _, err := Open(dir, good); err == nil {
		t.Fatal("opened encrypted segments without their key file")
	}
	names, _ := fs.ReadDir(dir)
	for _, n := range names {
		if strings.HasSuffix(n, quarantineSuffix) {
			t.Fatalf("%s set aside", n)
		}
	}
	f, _ := fs.Create(filepath.Join(dir, keyFile))
	f.WriteAt([]byte(kf), 0)
	f.Sync()
	f.Close()
	s, err = Open(dir, good)
	if err != nil {
		t.Fatal(err)
	}
	checkAll(t, s, 200)
	s.Close()

	// A plain store with a key configured stays plain, and says so.
	pdir := "/d/plain"
	p, err := Open(pdir, Options{FS: fs, Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	writeSecrets(t, p, 5)
	p.Close()
	if p, err = Open(pdir, good); err != nil {
		t.Fatal(err)
	}
	if p.Encrypted() || !p.Recovery().PlainWithKey {
		t.Fatalf("plain store: encrypted %v, report %+v", p.Encrypted(), p.Recovery())
	}
	checkAll(t, p, 5)
	p.Close()
}

// TestEncryptedRotationCrash opens a store with a new key and the old one
// as prev_key, crashing the in-memory disk before every mutating step of
// the open (the rewrap's temp file, its write, fsync, rename, the
// directory fsync, and whatever follows): at every point the store opens
// with one of the two keys, and with the pair, and every message is there.
// After a completed rotation the old key alone is refused.
func TestEncryptedRotationCrash(t *testing.T) {
	for _, c := range []crypt.Cipher{crypt.ChaCha, crypt.AES} {
		mem := vfs.NewMemFS()
		mem.MkdirAll("/d", 0o755)
		mem.SyncDir("/")
		dir := "/d/s"
		old := crypt.Config{Key: "old key", Cipher: c}
		s, err := Open(dir, Options{FS: mem, Sync: SyncAlways, Encryption: old})
		if err != nil {
			t.Fatal(err)
		}
		writeSecrets(t, s, 50)
		s.Close()
		var clones []*vfs.MemFS
		hook := &vfs.HookFS{Inner: mem, Hook: func(op, path string, mutating bool) {
			if mutating {
				clones = append(clones, mem.CrashClone())
			}
		}}
		rot := crypt.Config{Key: "new key", PrevKey: "old key", Cipher: c}
		s, err = Open(dir, Options{FS: hook, Sync: SyncAlways, Encryption: rot})
		if err != nil {
			t.Fatal(err)
		}
		if !s.Recovery().Rewrapped {
			t.Fatal("rotation did not rewrap")
		}
		s.Close()
		clones = append(clones, mem.CrashClone())
		if len(clones) < 5 {
			t.Fatalf("%d crash points", len(clones))
		}
		for i, cl := range clones {
			opened := 0
			for _, enc := range []crypt.Config{{Key: "new key"}, {Key: "old key"}} {
				s, err := Open(dir, Options{FS: cl.CrashClone(), Sync: SyncAlways, Encryption: enc})
				if err != nil {
					if !errors.Is(err, ErrKeyMismatch) {
						t.Fatalf("%v crash point %d, %q: %v", c, i, enc.Key, err)
					}
					continue
				}
				opened++
				checkAll(t, s, 50)
				s.Close()
			}
			if opened != 1 {
				t.Fatalf("%v crash point %d: opened with %d of the two keys", c, i, opened)
			}
			s, err := Open(dir, Options{FS: cl, Sync: SyncAlways, Encryption: rot})
			if err != nil {
				t.Fatalf("%v crash point %d: with key and prev_key: %v", c, i, err)
			}
			checkAll(t, s, 50)
			s.Close()
		}
		if _, err := Open(dir, Options{FS: mem, Sync: SyncAlways, Encryption: old}); !errors.Is(err, ErrKeyMismatch) {
			t.Fatalf("old key after rotation: %v", err)
		}
	}
}

// TestEncryptedNoncesNeverRepeat writes, crashes (keeping a random torn
// part of what was not synced), reopens (recovery truncates the torn tail
// and the next records land at the same offsets) and writes again, many
// times, collecting the nonce of every record ever found in any segment
// file, before and after each crash: no nonce seals two different records.
func TestEncryptedNoncesNeverRepeat(t *testing.T) {
	seed := crashSeed(t)
	defer func() {
		if t.Failed() {
			t.Logf("replay: JETWAL_CRASH_SEED=%d go test -run TestEncryptedNoncesNeverRepeat ./wal", seed)
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 2))
	for _, c := range []crypt.Cipher{crypt.ChaCha, crypt.AES} {
		fs := vfs.NewMemFS()
		fs.MkdirAll("/d", 0o755)
		fs.SyncDir("/")
		dir := "/d/s"
		opts := Options{FS: fs, Sync: SyncNever, SegmentSize: 8 << 10, CheckpointEvery: -1, Encryption: crypt.Config{Key: "k", Cipher: c}}
		seen := map[string][32]byte{} // nonce -> hash of the sealed body
		at := map[string]string{}     // file:offset -> nonce found there
		records, rewritten := 0, 0
		collect := func(fs vfs.FS) {
			files, err := segmentFiles(fs, dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				seg, err := segment.Open(fs, f.path, false)
				if err != nil {
					continue // a header a crash cut short
				}
				seg.Scan(func(off int64, r *segment.Record) error {
					if !r.Sealed() {
						t.Fatalf("%s: record %d not sealed", f.path, r.Seq)
					}
					n := string(crypt.Nonce(r.Data))
					h := sha256.Sum256(r.Data)
					if prev, ok := seen[n]; ok && prev != h {
						t.Fatalf("%v: nonce %x seals two different records (sequence %d in %s)", c, n, r.Seq, f.path)
					}
					if _, ok := seen[n]; !ok {
						records++
					}
					seen[n] = h
					pos := fmt.Sprint(f.path, ":", off)
					if prev, ok := at[pos]; ok && prev != n {
						rewritten++ // a new record where a lost one was
					}
					at[pos] = n
					return nil
				})
				seg.Close()
			}
		}
		for round := range 25 {
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			for i := range 5 + rng.IntN(60) {
				if _, _, err := s.Append(fmt.Sprintf("n.%d", i%3), nil, bytes.Repeat([]byte{byte(i)}, rng.IntN(200))); err != nil {
					t.Fatal(err)
				}
				if rng.IntN(20) == 0 {
					s.Sync()
				}
			}
			if rng.IntN(3) == 0 {
				s.Sync()
				writeSecrets(t, s, 3)
			}
			// Everything the process wrote, synced or not.
			s.mu.Lock()
			s.active.seg.Flush()
			s.mu.Unlock()
			collect(fs)
			crashed := fs.CrashCloneTorn(rng)
			s.Close()
			fs = crashed
			opts.FS = fs
		}
		collect(fs)
		if records < 200 || rewritten < 3 {
			t.Fatalf("%v: only %d records checked, %d offsets rewritten after a crash", c, records, rewritten)
		}
		t.Logf("%v: %d distinct nonces over 25 crashes, %d offsets written again after a crash", c, records, rewritten)
	}
}

// TestCheckKey: Check of an encrypted store without the key checks its
// structure and says the tags were not checked; a ciphertext byte changed
// with its checksum rewritten passes that check, and is damage, with its
// file and offset, when the key is given; a wrong key is an error, not
// damage.
func TestCheckKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	opts := Options{Sync: SyncNever, SegmentSize: 8 << 10, Encryption: crypt.Config{Key: "k"}, CheckpointEvery: -1}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	writeSecrets(t, s, 300)
	s.Close()
	rep, err := CheckKey(nil, dir, opts.Encryption)
	if err != nil || rep.Damaged() {
		t.Fatalf("clean store with the key: %v %+v", err, rep)
	}
	files, _ := segmentFiles(vfs.Default, dir)
	path := files[0].path
	off := tamperSealed(t, path, 2)
	rep, err = Check(nil, dir)
	if err != nil || rep.Damaged() || !strings.Contains(fmt.Sprint(rep.Findings), "need the key") {
		t.Fatalf("without the key: %v %+v", err, rep.Findings)
	}
	rep, err = CheckKey(nil, dir, opts.Encryption)
	if err != nil || !rep.Damaged() {
		t.Fatalf("with the key the tampered record is not damage: %v %+v", err, rep.Findings)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Kind == Damage && strings.Contains(f.Text, path) && strings.Contains(f.Text, fmt.Sprint(off)) {
			found = true
		}
	}
	if !found {
		t.Fatalf("damage does not name %s offset %d: %+v", path, off, rep.Findings)
	}
	if _, err := CheckKey(nil, dir, crypt.Config{Key: "wrong"}); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("wrong key: %v", err)
	}
}

// tamperSealed changes one ciphertext byte of the record of seq in the
// segment at path and rewrites the record's checksum to match, so only
// the authentication tag can tell; it returns the record's offset. The
// record is found without the key (structure only).
func tamperSealed(t *testing.T, path string, seq uint64) int64 {
	t.Helper()
	seg, err := segment.Open(vfs.Default, path, false)
	if err != nil {
		t.Fatal(err)
	}
	var off int64 = -1
	seg.Scan(func(o int64, r *segment.Record) error {
		if r.Seq == seq {
			off = o
		}
		return nil
	})
	seg.Close()
	if off < 0 {
		t.Fatalf("sequence %d not in %s", seq, path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := int64(binary.LittleEndian.Uint32(raw[off:]))
	raw[off+segment.RecordHeader+crypt.NonceSize+5] ^= 0x20
	binary.LittleEndian.PutUint64(raw[off+l-8:], xxhash.Sum64(raw[off:off+l-8]))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return off
}
