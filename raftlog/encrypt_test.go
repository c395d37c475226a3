package raftlog

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
	"github.com/jetwal/jetwal/vfs"
)

var encOpts = Options{MinSegmentSize: 4096, MaxSegmentSize: 16384, Encryption: crypt.Config{Key: "raftlog test key"}}

// TestEncryptedCrashRandomized is TestCrashRandomized with encryption on,
// both ciphers: random appends, deletions at both ends, stable writes and
// reopens, a crash image (torn unsynced writes) before a random disk
// operation, and the image reopens to what was acknowledged, never a hole,
// a torn or tampered entry.
func TestEncryptedCrashRandomized(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 30
	}
	for i, seed := range crashSeeds(t, n) {
		c := crypt.ChaCha
		if i%2 == 1 {
			c = crypt.AES
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("replay: JETWAL_CRASH_SEED=%d go test -run TestEncryptedCrashRandomized ./raftlog", seed)
				}
			}()
			runCrash(t, seed, crypt.Config{Key: "crash key", Cipher: c})
		})
	}
}

// secretEntries are entries whose Data and Extensions hold known words.
func secretEntries(from uint64, n int, term uint64) []Entry {
	es := make([]Entry, n)
	for i := range es {
		idx := from + uint64(i)
		es[i] = Entry{Index: idx, Term: term, Type: 1,
			Data:       []byte(fmt.Sprintf("raft-secret-payload-%06d", idx)),
			Extensions: []byte(fmt.Sprintf("raft-secret-extension-%d", idx))}
	}
	return es
}

var raftSecrets = []string{"raft-secret-payload", "raft-secret-extension"}

// fillSecrets writes indexes 1-400 in several segments, deletes a suffix
// and a prefix, writes on, and reopens.
func fillSecrets(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	s := mustOpen(t, nil, dir, opts)
	for i := uint64(1); i <= 400; i += 20 {
		if err := s.StoreEntries(secretEntries(i, 20, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRange(351, 400); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreEntries(secretEntries(351, 30, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(1, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return mustOpen(t, nil, dir, opts)
}

// TestEncryptedNoPlaintext greps every file of an encrypted log for the
// known payload and extension words and finds none; a plain log written
// the same way holds them (the search works). Every entry reads back.
func TestEncryptedNoPlaintext(t *testing.T) {
	for _, c := range []crypt.Cipher{crypt.ChaCha, crypt.AES} {
		dir := t.TempDir()
		opts := encOpts
		opts.Encryption.Cipher = c
		s := fillSecrets(t, dir, opts)
		if !s.Encrypted() {
			t.Fatal("store not encrypted")
		}
		for idx := uint64(11); idx <= 380; idx++ {
			var e Entry
			if err := s.GetEntry(idx, &e); err != nil {
				t.Fatalf("GetEntry(%d): %v", idx, err)
			}
			if want := fmt.Sprintf("raft-secret-payload-%06d", idx); string(e.Data) != want {
				t.Fatalf("GetEntry(%d) = %q, want %q", idx, e.Data, want)
			}
		}
		s.Close()
		if hits := diskgrep.Find(t, dir, raftSecrets...); len(hits) > 0 {
			t.Fatalf("%v: plain text on disk: %v", c, hits)
		}
		if segs, _ := filepath.Glob(filepath.Join(dir, "*.seg")); len(segs) < 3 {
			t.Fatalf("want several segments, have %d", len(segs))
		}
		r := checkClean(t, nil, dir)
		if !r.Encrypted || r.TagsChecked || r.First != 11 || r.Last != 380 {
			t.Fatalf("Check without key: %+v", r)
		}
		r, err := CheckKey(nil, dir, opts.Encryption)
		if err != nil || !r.OK() || !r.TagsChecked || r.Last != 380 {
			t.Fatalf("CheckKey: %+v, %v", r, err)
		}
	}
	plain := t.TempDir()
	fillSecrets(t, plain, smallOpts).Close()
	if hits := diskgrep.Find(t, plain, raftSecrets...); len(hits) == 0 {
		t.Fatal("the plain log holds none of the words: the search is broken")
	}
}

// dirBytes reads every file under dir.
func dirBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameBytes(t *testing.T, what string, before, after map[string][]byte) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for p, b := range before {
		if a, ok := after[p]; !ok || !bytes.Equal(a, b) {
			t.Fatalf("%s changed %s", what, p)
		}
	}
}

// TestEncryptedWrongKey opens an encrypted log with a wrong key, with no
// key, with two wrong keys, and with its key file moved away: each is
// refused with an error naming the directory, and no byte of any file
// changes. The right key then reads every entry.
func TestEncryptedWrongKey(t *testing.T) {
	dir := t.TempDir()
	fillSecrets(t, dir, encOpts).Close()
	before := dirBytes(t, dir)
	for _, bad := range []crypt.Config{{Key: "wrong"}, {}, {Key: "wrong", PrevKey: "also wrong"}} {
		o := encOpts
		o.Encryption = bad
		s, err := Open(nil, dir, o)
		if err == nil {
			s.Close()
			t.Fatalf("Open with %+v succeeded", bad)
		}
		if !errors.Is(err, ErrKeyMismatch) || !strings.Contains(err.Error(), dir) || errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open with %+v: %v; want ErrKeyMismatch naming %s", bad, err, dir)
		}
		sameBytes(t, fmt.Sprintf("Open with %+v", bad), before, dirBytes(t, dir))
	}
	// Without its key file the encrypted segments refuse the log too.
	kf := filepath.Join(dir, KeyFile)
	if err := os.Rename(kf, kf+".away"); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []crypt.Config{{}, encOpts.Encryption} {
		o := encOpts
		o.Encryption = cfg
		s, err := Open(nil, dir, o)
		if err == nil {
			s.Close()
			t.Fatalf("Open without the key file (%+v) succeeded", cfg)
		}
		if !strings.Contains(err.Error(), dir) || errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open without the key file: %v", err)
		}
	}
	if err := os.Rename(kf+".away", kf); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "Open without the key file", before, dirBytes(t, dir))
	if _, err := CheckKey(nil, dir, crypt.Config{Key: "wrong"}); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("CheckKey with a wrong key: %v", err)
	}
	s := mustOpen(t, nil, dir, encOpts)
	defer s.Close()
	m := model{first: 11}
	for _, e := range secretEntries(11, 340, 1) {
		m.ents = append(m.ents, e)
	}
	m.ents = append(m.ents, secretEntries(351, 30, 2)...)
	checkModel(t, s, &m)
	if v, _, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 2 {
		t.Fatalf("CurrentTerm = %d, %v", v, err)
	}
}

// TestEncryptedRotation rotates the key: opening with the new key and the
// old one as prev_key rewraps the key file (and reads everything); then the
// new key alone opens it, the old one alone does not, and no segment was
// rewritten.
func TestEncryptedRotation(t *testing.T) {
	dir := t.TempDir()
	fillSecrets(t, dir, encOpts).Close()
	// The sealed segments (all but the newest) must stay as they are.
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	segsBefore := map[string][]byte{}
	all := dirBytes(t, dir)
	for _, p := range segs[:len(segs)-1] {
		segsBefore[p] = all[p]
	}
	oldKey := dirBytes(t, dir)[filepath.Join(dir, KeyFile)]
	rot := encOpts
	rot.Encryption = crypt.Config{Key: "the new key", PrevKey: encOpts.Encryption.Key}
	s := mustOpen(t, nil, dir, rot)
	if !s.Rewrapped() || !s.Encrypted() {
		t.Fatalf("rotation: Rewrapped %v, Encrypted %v", s.Rewrapped(), s.Encrypted())
	}
	if err := s.StoreEntries(secretEntries(381, 5, 2)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	after := dirBytes(t, dir)
	if bytes.Equal(after[filepath.Join(dir, KeyFile)], oldKey) {
		t.Fatal("key file not rewritten")
	}
	for p, b := range segsBefore {
		if !bytes.Equal(after[p], b) {
			t.Fatalf("rotation rewrote %s", p)
		}
	}
	s = mustOpen(t, nil, dir, Options{MinSegmentSize: 4096, MaxSegmentSize: 16384, Encryption: crypt.Config{Key: "the new key"}})
	if s.Rewrapped() {
		t.Fatal("rewrapped twice")
	}
	var e Entry
	for idx := uint64(11); idx <= 385; idx++ {
		if err := s.GetEntry(idx, &e); err != nil {
			t.Fatalf("GetEntry(%d) after rotation: %v", idx, err)
		}
	}
	s.Close()
	if _, err := Open(nil, dir, encOpts); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("the old key after rotation: %v", err)
	}
}

// TestEncryptedRotationCrash crashes the rewrap at every disk operation:
// each image opens with the new key or the old one (with the new key and
// the old one as prev_key always), and holds every entry.
func TestEncryptedRotationCrash(t *testing.T) {
	mem := vfs.NewMemFS()
	s := mustOpen(t, mem, "/db", encOpts)
	if err := s.StoreEntries(secretEntries(1, 50, 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	rot := encOpts
	rot.Encryption = crypt.Config{Key: "new", PrevKey: encOpts.Encryption.Key}
	for target := 1; ; target++ {
		count := 0
		var img *vfs.MemFS
		base := mem.CrashClone()
		cfs := &crashFS{MemFS: base}
		cfs.before = func() {
			count++
			if count == target && img == nil {
				img = base.CrashClone()
			}
		}
		s, err := Open(cfs, "/db", rot)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if img == nil {
			if target < 3 {
				t.Fatalf("the rewrap made only %d disk operations", count)
			}
			break
		}
		s, err = Open(img, "/db", rot)
		if err != nil {
			t.Fatalf("crash at operation %d: %v", target, err)
		}
		var e Entry
		for idx := uint64(1); idx <= 50; idx++ {
			if err := s.GetEntry(idx, &e); err != nil {
				t.Fatalf("crash at operation %d: GetEntry(%d): %v", target, idx, err)
			}
		}
		s.Close()
	}
}

// TestEncryptedPlainStaysPlain opens a log written in the clear with a key:
// it stays in the clear, says so, and reads back; no key file appears.
func TestEncryptedPlainStaysPlain(t *testing.T) {
	dir := t.TempDir()
	fillSecrets(t, dir, smallOpts).Close()
	s := mustOpen(t, nil, dir, encOpts)
	if s.Encrypted() || !s.PlainWithKey() {
		t.Fatalf("Encrypted %v, PlainWithKey %v", s.Encrypted(), s.PlainWithKey())
	}
	if err := s.StoreEntries(secretEntries(381, 5, 2)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); !os.IsNotExist(err) {
		t.Fatalf("key file beside a plain log: %v", err)
	}
	s = mustOpen(t, nil, dir, smallOpts)
	defer s.Close()
	if last, _ := s.LastIndex(); last != 385 {
		t.Fatalf("last %d", last)
	}
}

// sealedRecords returns the offsets of the records of a segment file.
func sealedRecords(t *testing.T, fs vfs.FS, path string) []int64 {
	t.Helper()
	ss, err := segment.Open(fs, path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var offs []int64
	if _, err := ss.Scan(func(off int64, r *segment.Record) error {
		if !r.Sealed() {
			t.Fatalf("%s: record %d in the clear", path, r.Seq)
		}
		offs = append(offs, off)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return offs
}

// tamper flips a ciphertext byte of the record at off and rewrites its
// checksum, so only the tag can tell.
func tamper(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(binary.LittleEndian.Uint32(b[off:]))
	b[off+segment.RecordHeader+crypt.NonceSize] ^= 0x01
	binary.LittleEndian.PutUint64(b[off+n-8:], xxhash.Sum64(b[off:off+n-8]))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEncryptedTamper changes a ciphertext byte (checksum fixed up) in a
// sealed segment: GetEntry of that index fails naming the file and offset,
// the others read, Check without the key sees nothing wrong in the
// structure and CheckKey reports it. In the newest segment the same change
// at the last record is refused by Open (its checksum holds: not a torn
// write), and nothing is cut.
func TestEncryptedTamper(t *testing.T) {
	dir := t.TempDir()
	fillSecrets(t, dir, encOpts).Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	offs := sealedRecords(t, vfs.Default, segs[1])
	tamper(t, segs[1], offs[3])
	base := func() uint64 {
		var b uint64
		fmt.Sscanf(filepath.Base(segs[1]), "%d.seg", &b)
		return b
	}()
	s := mustOpen(t, nil, dir, encOpts)
	var e Entry
	err := s.GetEntry(base+3, &e)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), segs[1]) || !strings.Contains(err.Error(), fmt.Sprint(offs[3])) {
		t.Fatalf("GetEntry of the tampered record: %v", err)
	}
	if err := s.GetEntry(base+4, &e); err != nil {
		t.Fatal(err)
	}
	s.Close()
	checkClean(t, nil, dir)
	r, err := CheckKey(nil, dir, encOpts.Encryption)
	if err != nil || r.OK() || !strings.Contains(strings.Join(r.Damage, "\n"), segs[1]) {
		t.Fatalf("CheckKey: %+v, %v", r, err)
	}

	dir = t.TempDir()
	fillSecrets(t, dir, encOpts).Close()
	segs, _ = filepath.Glob(filepath.Join(dir, "*.seg"))
	newest := segs[len(segs)-1]
	offs = sealedRecords(t, vfs.Default, newest)
	tamper(t, newest, offs[len(offs)-1])
	before := dirBytes(t, dir)
	if s, err := Open(nil, dir, encOpts); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), newest) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("Open with a tampered last record: %v", err)
	}
	sameBytes(t, "Open with a tampered last record", before, dirBytes(t, dir))
	if r, err := CheckKey(nil, dir, encOpts.Encryption); err != nil || r.OK() {
		t.Fatalf("CheckKey of a tampered last record: %+v, %v", r, err)
	}
}

// TestEncryptedNoncesNeverRepeat writes, crashes at a random disk
// operation (keeping a random torn part of what was not synced), reopens
// (recovery cuts the torn tail; the next entries land at the same offsets,
// and suffix deletions make new segment files under old names), and writes
// again, many times, collecting the nonce of every record ever found in
// any segment file: no nonce seals two different records.
func TestEncryptedNoncesNeverRepeat(t *testing.T) {
	seed := crashSeeds(t, 1)[0]
	defer func() {
		if t.Failed() {
			t.Logf("replay: JETWAL_CRASH_SEED=%d go test -run TestEncryptedNoncesNeverRepeat ./raftlog", seed)
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 3))
	for _, c := range []crypt.Cipher{crypt.ChaCha, crypt.AES} {
		opts := encOpts
		opts.Encryption.Cipher = c
		mem := vfs.NewMemFS()
		seen := map[string][32]byte{} // nonce -> hash of the sealed body
		at := map[string]string{}     // file:offset -> nonce last found there
		records, rewritten := 0, 0
		collect := func(fs vfs.FS) {
			names, _ := fs.ReadDir("/db")
			for _, n := range names {
				if !strings.HasSuffix(n, ".seg") {
					continue
				}
				path := "/db/" + n
				ss, err := segment.Open(fs, path, false)
				if err != nil {
					continue // a header a crash cut short
				}
				ss.Scan(func(off int64, r *segment.Record) error {
					if !r.Sealed() {
						t.Fatalf("%s: record %d in the clear", path, r.Seq)
					}
					nonce := string(crypt.Nonce(r.Data))
					h := sha256.Sum256(r.Data)
					if prev, ok := seen[nonce]; ok && prev != h {
						t.Fatalf("%v: nonce %x seals two different records (index %d in %s)", c, nonce, r.Seq, path)
					}
					if _, ok := seen[nonce]; !ok {
						records++
					}
					seen[nonce] = h
					pos := fmt.Sprint(path, ":", off)
					if prev, ok := at[pos]; ok && prev != nonce {
						rewritten++
					}
					at[pos] = nonce
					return nil
				})
				ss.Close()
			}
		}
		term := uint64(1)
		for round := range 30 {
			var img *vfs.MemFS
			count, target := 0, 1+rng.IntN(40)
			cfs := &crashFS{MemFS: mem}
			cfs.before = func() {
				count++
				if count == target && img == nil {
					img = mem.CrashCloneTorn(rng)
				}
			}
			s, err := Open(cfs, "/db", opts)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			for range 3 + rng.IntN(8) {
				last, _ := s.LastIndex()
				if first, _ := s.FirstIndex(); last > first+5 && rng.IntN(5) == 0 {
					if err := s.DeleteRange(last-rng.Uint64N(5), last); err != nil {
						t.Fatal(err)
					}
					term++
					continue
				}
				if err := s.StoreEntries(genEntries(last+1, 1+rng.IntN(30), term)); err != nil {
					t.Fatal(err)
				}
			}
			collect(mem) // everything this process wrote
			s.Close()
			if img == nil {
				img = mem.CrashCloneTorn(rng)
			}
			collect(img)
			mem = img
		}
		if records < 300 || rewritten < 3 {
			t.Fatalf("%v: only %d records checked, %d offsets rewritten after a crash", c, records, rewritten)
		}
		t.Logf("%v: %d distinct nonces over 30 crashes, %d offsets written again after a crash", c, records, rewritten)
	}
}
