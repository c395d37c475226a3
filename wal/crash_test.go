package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// crashModel tracks what a store acknowledged as durable.
type crashModel struct {
	msgs    map[uint64]store.Msg // acknowledged and not removed
	removed map[uint64]bool      // durably removed
	maxSeq  uint64               // highest sequence ever acknowledged
}

func crashSeed(t *testing.T) uint64 {
	if s := os.Getenv("JETWAL_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return rand.Uint64()
}

// TestCrashRandomized runs random operations on the crashable filesystem,
// crashes at a random point (keeping a random part of unsynced bytes), and
// checks the reopened store against what was acknowledged.
func TestCrashRandomized(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for round := 0; round < rounds; round++ {
		seed := crashSeed(t)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("replay: JETWAL_CRASH_SEED=%d go test -run 'TestCrashRandomized' ./wal", seed)
				}
			}()
			runCrash(t, seed, crypt.Config{})
		})
	}
}

// TestCrashRandomizedEncrypted is TestCrashRandomized on an encrypted
// store, both ciphers: torn tails of sealed records are cut like any other,
// and nothing damaged is served.
func TestCrashRandomizedEncrypted(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 6
	}
	for round := 0; round < rounds; round++ {
		seed := crashSeed(t)
		c := []crypt.Cipher{crypt.ChaCha, crypt.AES}[round%2]
		t.Run(fmt.Sprint(c, "/", seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("replay: JETWAL_CRASH_SEED=%d go test -run 'TestCrashRandomizedEncrypted' ./wal", seed)
				}
			}()
			runCrash(t, seed, crypt.Config{Key: "crash key", Cipher: c})
		})
	}
}

func runCrash(t *testing.T, seed uint64, enc crypt.Config) {
	rng := rand.New(rand.NewPCG(seed, 1))
	fs := vfs.NewMemFS()
	if err := fs.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	fs.SyncDir("/")
	opts := Options{FS: fs, Sync: SyncAlways, SegmentSize: int64(4096 + rng.IntN(16384)), CheckpointEvery: -1, Encryption: enc}
	s, err := Open("/db/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Encrypted() != enc.Enabled() {
		t.Fatalf("store encrypted %v, want %v", s.Encrypted(), enc.Enabled())
	}
	m := crashModel{msgs: map[uint64]store.Msg{}, removed: map[uint64]bool{}}
	nops := 50 + rng.IntN(600)
	for i := 0; i < nops; i++ {
		switch op := rng.IntN(100); {
		case op < 75:
			subj := fmt.Sprintf("s.%d", rng.IntN(8))
			data := make([]byte, rng.IntN(300))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			var hdr []byte
			if rng.IntN(4) == 0 {
				hdr = []byte("NATS/1.0\r\nK: " + strconv.Itoa(i) + "\r\n\r\n")
			}
			seq, ts, err := s.Append(subj, hdr, data)
			if err != nil {
				t.Fatalf("append: %v", err)
			}
			if seq <= m.maxSeq {
				t.Fatalf("sequence %d reused (max %d)", seq, m.maxSeq)
			}
			m.maxSeq = seq
			m.msgs[seq] = store.Msg{Seq: seq, Time: ts, Subject: subj, Header: hdr, Data: data}
		case op < 85:
			if m.maxSeq == 0 {
				continue
			}
			q := 1 + rng.Uint64N(m.maxSeq)
			err := s.Delete(q, rng.IntN(2) == 0)
			_, had := m.msgs[q]
			if had != (err == nil) {
				t.Fatalf("delete %d: had=%v err=%v", q, had, err)
			}
			if had {
				delete(m.msgs, q)
				m.removed[q] = true
			}
		case op < 88:
			subj := fmt.Sprintf("s.%d", rng.IntN(8))
			if _, err := s.Purge(subj, 0, uint64(rng.IntN(3))); err != nil {
				t.Fatal(err)
			}
			m.resync(t, s)
		case op < 90:
			if m.maxSeq == 0 {
				continue
			}
			if _, err := s.Compact(1 + rng.Uint64N(m.maxSeq)); err != nil {
				t.Fatal(err)
			}
			m.resync(t, s)
		case op < 93:
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = Open("/db/s", opts); err != nil {
				t.Fatal(err)
			}
			m.verify(t, s, true)
		}
	}
	// Crash: the old process's store is abandoned; only what reached the
	// disk survives, plus a random part of what did not.
	var crashed *vfs.MemFS
	if rng.IntN(2) == 0 {
		crashed = fs.CrashClone()
	} else {
		crashed = fs.CrashCloneTorn(rng)
	}
	s.Close()
	opts.FS = crashed
	s2, err := Open("/db/s", opts)
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer s2.Close()
	m.verify(t, s2, false)
	seq, _, err := s2.Append("after.crash", nil, []byte("x"))
	if err != nil || seq <= m.maxSeq {
		t.Fatalf("append after crash: seq %d (max acknowledged %d) err %v", seq, m.maxSeq, err)
	}
}

// resync replaces the model's live set with the store's after an operation
// whose exact effect the model does not compute (purge, compact); removed
// messages are durable once the call returned under SyncAlways.
func (m *crashModel) resync(t *testing.T, s *Store) {
	t.Helper()
	for q := range m.msgs {
		var got store.Msg
		if err := s.Load(q, &got); errors.Is(err, store.ErrNotFound) {
			delete(m.msgs, q)
			m.removed[q] = true
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// verify checks that every acknowledged message is present and identical,
// that durably removed ones stay removed, and that nothing returned is
// corrupt. exact also requires nothing unacknowledged.
func (m *crashModel) verify(t *testing.T, s *Store, exact bool) {
	t.Helper()
	for q, want := range m.msgs {
		var got store.Msg
		if err := s.Load(q, &got); err != nil {
			t.Fatalf("acknowledged message %d lost: %v (recovery %+v)", q, err, s.Recovery())
		}
		if got.Subject != want.Subject || !bytes.Equal(got.Data, want.Data) || !bytes.Equal(got.Header, want.Header) || got.Time != want.Time {
			t.Fatalf("message %d differs: got %q/%q want %q/%q", q, got.Subject, got.Data, want.Subject, want.Data)
		}
	}
	st := s.State()
	if st.LastSeq < m.maxSeq {
		t.Fatalf("last sequence went back: %d < %d", st.LastSeq, m.maxSeq)
	}
	n := uint64(0)
	var msg store.Msg
	for q := uint64(1); ; q = msg.Seq + 1 {
		err := s.LoadNext("", q, &msg)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			t.Fatalf("LoadNext(%d): %v", q, err)
		}
		if m.removed[msg.Seq] {
			t.Fatalf("removed message %d came back", msg.Seq)
		}
		if _, ok := m.msgs[msg.Seq]; !ok && exact {
			t.Fatalf("unexpected message %d", msg.Seq)
		}
		n++
	}
	if n != st.Msgs {
		t.Fatalf("walked %d messages, state says %d", n, st.Msgs)
	}
	if len(s.Recovery().Corrupt) > 0 {
		t.Fatalf("corruption reported after a crash: %v", s.Recovery().Corrupt)
	}
}
