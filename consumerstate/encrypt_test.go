package consumerstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

func testDataKey(t testing.TB) *crypt.DataKey {
	t.Helper()
	dk, err := crypt.NewDataKey(crypt.ChaCha)
	if err != nil {
		t.Fatal(err)
	}
	return dk
}

// walkFiles returns every file under dir with its bytes.
func walkFiles(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var walk func(string)
	walk = func(d string) {
		names, err := fsys.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			p := filepath.Join(d, n)
			fi, err := fsys.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.IsDir {
				walk(p)
				continue
			}
			b, err := readFile(fsys, p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = b
		}
	}
	walk(dir)
	return out
}

// checkNoncesUnique reads the nonce of every sealed value under obsDir
// (log and catalogue records, snapshot bodies, configs) and fails on a
// repeat.
func checkNoncesUnique(t *testing.T, fsys vfs.FS, obsDir string) {
	t.Helper()
	seen := map[string]string{}
	add := func(where string, sealed []byte) {
		n := crypt.Nonce(sealed)
		if n == nil {
			t.Fatalf("%s: sealed value of %d bytes", where, len(sealed))
		}
		if prev, ok := seen[string(n)]; ok {
			t.Fatalf("nonce %x used twice: %s and %s", n, prev, where)
		}
		seen[string(n)] = where
	}
	records := func(path string, b []byte, hdr int) {
		d := xxhash.New()
		gen := binary.LittleEndian.Uint64(b[8:16])
		for off := int64(hdr); off < int64(len(b)); {
			payload, n, ok := recordAt(d, b, gen, off, nil)
			if !ok {
				break
			}
			add(path, payload)
			off += recHeaderSize + int64(n)
		}
	}
	for path, b := range walkFiles(t, fsys, obsDir) {
		switch base := filepath.Base(path); {
		case base == catalogFile && len(b) >= catalogHeaderSize:
			records(path, b, catalogHeaderSize)
		case strings.HasSuffix(base, ".log") && len(b) >= logHeaderSize:
			records(path, b, logHeaderSize)
		case base == stateFile:
			add(path, b[snapHeaderSize:len(b)-snapTrailerSize])
		case base == metaFile:
			add(path, b[metaSealedHeader:])
		}
	}
}

const secretCfg = `{"durable_name":"SECRET-CONSUMER","filter_subject":"orders.secret.subject"}`

// encryptedStore makes a store under /obs holding consumer SECRET-CONSUMER
// (a directory, state in its snapshot and log records) and CATALOGUED (in
// the catalogue only), sealed with key.
func encryptedStore(t *testing.T, fsys vfs.FS, key *crypt.DataKey) State {
	t.Helper()
	s := openStore(t, fsys, "/obs", Options{Key: key, Sync: SyncAlways()})
	t.Cleanup(func() { s.Close() })
	c, err := s.Create("SECRET-CONSUMER", []byte(secretCfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create("CATALOGUED", []byte(`{"durable_name":"CATALOGUED"}`)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		mustUpdate(t, c, func(st *State) { st.Deliver(StreamSeq(i), 1, int64(i)) })
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Checkpoint(); err != nil { // snapshot of generation 2
		t.Fatal(err)
	}
	for _, q := range []StreamSeq{1, 2, 5} {
		mustUpdate(t, c, func(st *State) { st.Ack(q) })
		if err := c.Flush(); err != nil { // a log record each
			t.Fatal(err)
		}
	}
	want := c.Snapshot()
	// Abandon without Close: the log records stay for the reopen.
	return want
}

// TestEncryptedRoundTrip: with Options.Key nothing readable is left in any
// file (names, configs), the state and configs come back, Check passes
// without the key and CheckKey with it, and the store keeps working.
func TestEncryptedRoundTrip(t *testing.T) {
	key := testDataKey(t)
	mem := vfs.NewMemFS()
	want := encryptedStore(t, mem, key)
	img := mem.ProcessCrashClone()
	for path, b := range walkFiles(t, img, "/obs") {
		for _, needle := range []string{"SECRET-CONSUMER", "CATALOGUED", "orders.secret.subject", "durable_name"} {
			if bytes.Contains(b, []byte(needle)) {
				t.Errorf("%s holds %q in the clear", path, needle)
			}
		}
	}
	if err := Check("/obs", img); err != nil {
		t.Fatalf("check without the key: %v", err)
	}
	if err := CheckKey("/obs", img, key); err != nil {
		t.Fatalf("check with the key: %v", err)
	}
	if err := CheckKey("/obs", img, testDataKey(t)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("check with another key: %v, want ErrCorrupt", err)
	}
	s := openStore(t, img, "/obs", Options{Key: key})
	c, err := s.Load("SECRET-CONSUMER")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshot(); !got.Equal(&want) {
		t.Fatalf("state after reopen %+v, want %+v", got, want)
	}
	if r := c.Recovery(); r.LogRecords != 3 || r.Generation != 2 {
		t.Fatalf("recovery %+v: want 3 log records on snapshot 2", r)
	}
	if got := string(c.Config()); got != secretCfg {
		t.Fatalf("config %s", got)
	}
	cat, err := s.Load("CATALOGUED")
	if err != nil || string(cat.Config()) != `{"durable_name":"CATALOGUED"}` {
		t.Fatalf("catalogued consumer: %v %s", err, cat.Config())
	}
	if err := c.UpdateConfig([]byte(`{"durable_name":"SECRET-CONSUMER","v":2}`)); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, c, func(st *State) { st.Ack(3) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoncesUnique(t, img, "/obs")
	s = openStore(t, img, "/obs", Options{Key: key})
	defer s.Close()
	c, err = s.Load("SECRET-CONSUMER")
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Snapshot(); st.AckFloor.Stream != 3 || string(c.Config()) != `{"durable_name":"SECRET-CONSUMER","v":2}` {
		t.Fatalf("after the second reopen: %+v %s", st, c.Config())
	}
}

// TestEncryptedKeyMismatch: sealed files do not load with another key or
// with none, a plain store does not load with a key, and refusing changes
// nothing.
func TestEncryptedKeyMismatch(t *testing.T) {
	key := testDataKey(t)
	mem := vfs.NewMemFS()
	encryptedStore(t, mem, key)
	img := mem.ProcessCrashClone()
	before := walkFiles(t, img, "/obs")
	for name, k := range map[string]*crypt.DataKey{"other key": testDataKey(t), "no key": nil} {
		_, err := Open("/obs", Options{FS: img, Key: k})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), catalogFile) {
			t.Fatalf("%s: open: %v, want ErrCorrupt naming %s", name, err, catalogFile)
		}
	}
	// Without the catalogue in the way, the consumer's own files refuse.
	noCat := img.ProcessCrashClone()
	if err := noCat.Remove("/obs/" + catalogFile); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, noCat, "/obs", Options{Key: testDataKey(t)})
	if _, err := s.Load("SECRET-CONSUMER"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "does not open") {
		t.Fatalf("load with another key: %v", err)
	}
	s.Close()
	after := walkFiles(t, img, "/obs")
	if len(after) != len(before) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for p, b := range before {
		if !bytes.Equal(after[p], b) {
			t.Fatalf("%s changed by a refused open", p)
		}
	}

	plain := vfs.NewMemFS()
	ps := openStore(t, plain, "/obs", Options{})
	c, err := ps.Create("p", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, c, func(st *State) { st.Deliver(1, 1, 1) })
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckKey("/obs", plain, key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("plain consumer checked with a key: %v", err)
	}
	if _, err := Open("/obs", Options{FS: plain, Key: key}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not encrypted") {
		t.Fatalf("plain store opened with a key: %v", err)
	}
	if err := plain.Remove("/obs/" + catalogFile); err != nil {
		t.Fatal(err)
	}
	ps = openStore(t, plain, "/obs", Options{Key: key})
	if _, err := ps.Load("p"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not encrypted") {
		t.Fatalf("plain consumer loaded with a key: %v", err)
	}
	ps.Close()
}

// resum recomputes the checksum of the log record at off after an edit.
func resum(b []byte, off int64) {
	gen := binary.LittleEndian.Uint64(b[8:16])
	n := int64(binary.LittleEndian.Uint32(b[off+4:]))
	sum := recordSum(xxhash.New(), gen, off, b[off:off+8], b[off+recHeaderSize:off+recHeaderSize+n])
	binary.LittleEndian.PutUint64(b[off+8:], sum)
}

// TestEncryptedTamper: a flipped ciphertext byte whose checksum was made
// to match is found by the tag, as damage: a log record is never replayed
// (salvaged around, or cut as a torn tail), a snapshot, config or
// catalogue record refuses the load naming file and offset.
func TestEncryptedTamper(t *testing.T) {
	key := testDataKey(t)
	const dir = "/obs/SECRET-CONSUMER"
	logPath := filepath.Join(dir, logName(2))
	setup := func(t *testing.T) (*vfs.MemFS, State) {
		mem := vfs.NewMemFS()
		want := encryptedStore(t, mem, key)
		return mem.ProcessCrashClone(), want
	}
	recOffsets := func(t *testing.T, fsys vfs.FS) []int64 {
		b, err := readFile(fsys, logPath)
		if err != nil {
			t.Fatal(err)
		}
		var offs []int64
		for off := int64(logHeaderSize); off < int64(len(b)); {
			offs = append(offs, off)
			off += recHeaderSize + int64(binary.LittleEndian.Uint32(b[off+4:]))
		}
		if len(offs) != 3 {
			t.Fatalf("%d log records, want 3", len(offs))
		}
		return offs
	}

	t.Run("log record", func(t *testing.T) {
		img, _ := setup(t)
		offs := recOffsets(t, img)
		editFile(t, img, logPath, func(b []byte) []byte {
			b[offs[1]+recHeaderSize+crypt.NonceSize] ^= 0x01 // the second ack (seq 2)
			resum(b, offs[1])
			return b
		})
		if err := CheckKey("/obs", img, key); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), logPath) {
			t.Fatalf("check: %v, want ErrCorrupt naming %s", err, logPath)
		}
		s := openStore(t, img, "/obs", Options{Key: key})
		defer s.Close()
		c, err := s.Load("SECRET-CONSUMER")
		if err != nil {
			t.Fatal(err)
		}
		r := c.Recovery()
		if len(r.Damaged) != 1 || r.Damaged[0].File != logPath || r.Damaged[0].Offset != offs[1] {
			t.Fatalf("damage not reported at %s offset %d: %+v", logPath, offs[1], r)
		}
		if _, pending := c.Snapshot().Pending[2]; !pending {
			t.Fatal("the tampered ack of seq 2 was applied")
		}
	})
	t.Run("last log record", func(t *testing.T) {
		img, _ := setup(t)
		offs := recOffsets(t, img)
		editFile(t, img, logPath, func(b []byte) []byte {
			b[len(b)-1] ^= 0x80 // the tag of the last record (seq 5)
			resum(b, offs[2])
			return b
		})
		s := openStore(t, img, "/obs", Options{Key: key})
		defer s.Close()
		c, err := s.Load("SECRET-CONSUMER")
		if err != nil {
			t.Fatal(err)
		}
		if r := c.Recovery(); r.TornOffset != offs[2] || r.TornBytes == 0 {
			t.Fatalf("tampered last record not cut at offset %d: %+v", offs[2], r)
		}
		if _, pending := c.Snapshot().Pending[5]; !pending {
			t.Fatal("the tampered ack of seq 5 was applied")
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		img, _ := setup(t)
		path := filepath.Join(dir, stateFile)
		editFile(t, img, path, func(b []byte) []byte {
			b[snapHeaderSize+crypt.NonceSize] ^= 0x04
			binary.LittleEndian.PutUint64(b[len(b)-8:], xxhash.Sum64(b[:len(b)-8]))
			return b
		})
		s := openStore(t, img, "/obs", Options{Key: key})
		defer s.Close()
		_, err := s.Load("SECRET-CONSUMER")
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "offset 20") {
			t.Fatalf("load: %v, want ErrCorrupt naming %s offset 20", err, path)
		}
	})
	t.Run("config", func(t *testing.T) {
		img, _ := setup(t)
		path := filepath.Join(dir, metaFile)
		var stored []byte
		editFile(t, img, path, func(b []byte) []byte {
			b[metaSealedHeader+crypt.NonceSize+3] ^= 0x20
			stored = b
			return b
		})
		if err := writeFile(img, filepath.Join(dir, metaSumFile), metaSum(stored)); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, img, "/obs", Options{Key: key})
		defer s.Close()
		_, err := s.Load("SECRET-CONSUMER")
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Fatalf("load: %v, want ErrCorrupt naming %s", err, path)
		}
	})
	t.Run("config of another consumer", func(t *testing.T) {
		img, _ := setup(t)
		// A sealed config moved into another consumer's directory does
		// not open there: its name is in the associated data.
		s := openStore(t, img, "/obs", Options{Key: key})
		o, err := s.Create("OTHER", []byte(`{"durable_name":"OTHER"}`))
		if err != nil {
			t.Fatal(err)
		}
		mustUpdate(t, o, func(st *State) { st.Deliver(1, 1, 1) })
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{metaFile, metaSumFile} {
			b, err := readFile(img, filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := writeFile(img, filepath.Join("/obs/OTHER", f), b); err != nil {
				t.Fatal(err)
			}
		}
		s = openStore(t, img, "/obs", Options{Key: key})
		defer s.Close()
		if _, err := s.Load("OTHER"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "/obs/OTHER/meta.inf") {
			t.Fatalf("load of a swapped config: %v", err)
		}
	})
	t.Run("catalogue record", func(t *testing.T) {
		img, _ := setup(t)
		path := "/obs/" + catalogFile
		editFile(t, img, path, func(b []byte) []byte {
			off := int64(catalogHeaderSize) // the first create, followed by a good one
			b[off+recHeaderSize+crypt.NonceSize+1] ^= 0x02
			resum(b, off)
			return b
		})
		_, err := Open("/obs", Options{FS: img, Key: key})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "offset 24") {
			t.Fatalf("open: %v, want ErrCorrupt naming %s offset 24", err, path)
		}
	})
}
