package consumerstate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

const catPath = "/obs/" + catalogFile

// catalogImage returns the disk after a crash that followed three creates
// and one delete, none of them materialized: the catalogue holds four
// records and no consumer has a directory.
func catalogImage(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMemFS()
	s := openStore(t, mem, "/obs", Options{})
	for _, n := range []string{"a", "b", "c"} {
		if _, err := s.Create(n, []byte(testCfg)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete("b"); err != nil {
		t.Fatal(err)
	}
	img := mem.CrashClone()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return img
}

// catalogRecords returns the offsets of the records of a catalogue.
func catalogRecords(t *testing.T, b []byte) []int {
	t.Helper()
	var offs []int
	for off := catalogHeaderSize; off+recHeaderSize <= len(b) && string(b[off:off+4]) == recMagic; {
		offs = append(offs, off)
		off += recHeaderSize + int(uint32(b[off+4])|uint32(b[off+5])<<8|uint32(b[off+6])<<16|uint32(b[off+7])<<24)
	}
	if len(offs) != 4 {
		t.Fatalf("catalogue holds %d records, want 4", len(offs))
	}
	return offs
}

func TestCatalogCreateWritesNoDirectory(t *testing.T) {
	mem := vfs.NewMemFS()
	fsys, counts := newCountFS(mem)
	s := openStore(t, fsys, "/obs", Options{})
	defer s.Close()
	if _, err := s.Create("first", []byte(testCfg)); err != nil { // creates the catalogue
		t.Fatal(err)
	}
	counts.reset()
	if _, err := s.Create("second", []byte(testCfg)); err != nil {
		t.Fatal(err)
	}
	_, _, ops := counts.counts()
	want := []string{"write " + catPath, "sync " + catPath}
	if !slices.Equal(ops, want) {
		t.Fatalf("create made mutating operations %q, want %q", ops, want)
	}
	names, err := s.List()
	if err != nil || !slices.Equal(names, []string{"first", "second"}) {
		t.Fatalf("list: %v, %v", names, err)
	}
	// A consumer whose state never changed needs no directory.
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("/obs/second"); err == nil {
		t.Fatal("directory written for a consumer without state")
	}
	// The first flush of a change writes it.
	c, err := s.Load("second")
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, c, func(st *State) { st.Deliver(1, 1, 1) })
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("/obs/second/" + metaFile); err != nil {
		t.Fatalf("after a flushed change: %v", err)
	}
}

func TestCatalogReopenKeepsConsumersWithoutDirectories(t *testing.T) {
	img := catalogImage(t)
	if err := Check("/obs", img); err != nil {
		t.Fatalf("check: %v", err)
	}
	s := openStore(t, img, "/obs", Options{})
	names, err := s.List()
	if err != nil || !slices.Equal(names, []string{"a", "c"}) {
		t.Fatalf("list: %v, %v; want [a c]", names, err)
	}
	for _, n := range names {
		c, err := s.Load(n)
		if err != nil {
			t.Fatal(err)
		}
		if string(c.Config()) != testCfg {
			t.Fatalf("consumer %s: config %s", n, c.Config())
		}
		if _, err := img.Stat("/obs/" + n); err == nil {
			t.Fatalf("consumer %s got a directory without state", n)
		}
	}
	// Open compacted the catalogue to the two live creates.
	b, err := readFile(img, catPath)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := parseCatalog(b, catPath, opener{})
	if err != nil || cc.records != 2 || cc.gen != 2 {
		t.Fatalf("catalogue after reopen: %+v, %v; want 2 records of generation 2", cc, err)
	}
	c, err := s.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, c, func(st *State) { st.Deliver(1, 1, 1) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, img, "/obs", Options{})
	defer s.Close()
	c, err = s.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Snapshot(); st.Delivered.Stream != 1 {
		t.Fatalf("consumer c after close and reopen: %+v", st)
	}
	if _, err := img.Stat("/obs/c/" + metaFile); err != nil {
		t.Fatal(err)
	}
}

func TestCatalogCorruption(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(t *testing.T, b []byte) []byte
		wantErr string   // substring of the error; "" means none
		want    []string // consumers after reopen
	}{
		{name: "header magic", edit: func(t *testing.T, b []byte) []byte { b[0] = 'X'; return b },
			wantErr: "offset 0: bad catalogue magic"},
		{name: "header generation", edit: func(t *testing.T, b []byte) []byte { b[9] ^= 1; return b },
			wantErr: "offset 16: catalogue header checksum"},
		{name: "short file", edit: func(t *testing.T, b []byte) []byte { return b[:10] },
			wantErr: "offset 0: 10 bytes"},
		{name: "first record damaged, others good", edit: func(t *testing.T, b []byte) []byte {
			b[catalogRecords(t, b)[0]+recHeaderSize] ^= 0x40
			return b
		}, wantErr: "offset 24: damaged catalogue record followed by a good one"},
		{name: "final record torn: a delete never acknowledged", edit: func(t *testing.T, b []byte) []byte {
			offs := catalogRecords(t, b)
			b[offs[3]+recHeaderSize+1] ^= 0x40
			return b
		}, want: []string{"a", "b", "c"}},
		{name: "final record cut short", edit: func(t *testing.T, b []byte) []byte {
			return b[:catalogRecords(t, b)[3]+5]
		}, want: []string{"a", "b", "c"}},
		{name: "final two records zeroed", edit: func(t *testing.T, b []byte) []byte {
			clear(b[catalogRecords(t, b)[2]:])
			return b
		}, want: []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := catalogImage(t)
			editFile(t, img, catPath, func(b []byte) []byte { return tc.edit(t, b) })
			checkErr := Check("/obs", img)
			s, err := Open("/obs", Options{FS: img})
			if tc.wantErr != "" {
				for what, e := range map[string]error{"open": err, "check": checkErr} {
					if !errors.Is(e, ErrCorrupt) || !strings.Contains(e.Error(), catPath) || !strings.Contains(e.Error(), tc.wantErr) {
						t.Fatalf("%s: %v, want ErrCorrupt naming %s and %q", what, e, catPath, tc.wantErr)
					}
				}
				return
			}
			if err != nil || checkErr != nil {
				t.Fatalf("open: %v, check: %v", err, checkErr)
			}
			defer s.Close()
			names, err := s.List()
			if err != nil || !slices.Equal(names, tc.want) {
				t.Fatalf("list: %v, %v; want %v", names, err, tc.want)
			}
		})
	}
}

// TestCatalogRandomDamage flips random bytes of a catalogue: Open and Check
// must return (an error or a store), never panic, and agree on ErrCorrupt.
func TestCatalogRandomDamage(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 11))
	base := catalogImage(t)
	data, err := readFile(base, catPath)
	if err != nil {
		t.Fatal(err)
	}
	end := catalogRecords(t, data)[3] + 64
	for range 300 {
		img := base.CrashClone()
		editFile(t, img, catPath, func(b []byte) []byte {
			for range 1 + rng.IntN(3) {
				b[rng.IntN(end)] ^= byte(1 + rng.IntN(255))
			}
			return b
		})
		checkErr := Check("/obs", img)
		s, err := Open("/obs", Options{FS: img})
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("seed %d: open: %v, check: %v", seed, err, checkErr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), catPath) {
				t.Fatalf("seed %d: open: %v, want ErrCorrupt naming the catalogue", seed, err)
			}
			continue
		}
		if _, err := s.List(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// An UpdateConfig that finds the catalogue full compacts it (the consumer
// being updated is carried with its old config, then the update record is
// appended) and the new config survives a crash.
func TestCatalogUpdateCompacts(t *testing.T) {
	mem := vfs.NewMemFS()
	opts := Options{FS: mem, catalogBytes: 64}
	s, err := Open("/obs", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Create("a", []byte(`{"v":1}`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var err error
		for v := 2; v < 6 && err == nil; v++ {
			err = c.UpdateConfig(fmt.Appendf(nil, `{"v":%d}`, v))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("UpdateConfig did not return (deadlocked compacting the catalogue?)")
	}
	if _, err := mem.Stat("/obs/a"); err == nil {
		t.Fatal("config updates wrote a directory")
	}
	b, err := readFile(mem, catPath)
	if err != nil {
		t.Fatal(err)
	}
	if cc, err := parseCatalog(b, catPath, opener{}); err != nil || cc.gen != 2 || cc.records != 5 {
		t.Fatalf("catalogue %+v, %v: want generation 2 (one compaction) holding the carried create and 4 updates", cc, err)
	}
	img := mem.CrashClone()
	s2, err := Open("/obs", Options{FS: img})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	c2, err := s2.Load("a")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c2.Config()); got != `{"v":5}` {
		t.Fatalf("config after crash %s, want {\"v\":5}", got)
	}
}
