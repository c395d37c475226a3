package wal

import (
	"errors"
	"testing"

	"github.com/jetwal/jetwal/crypt"
)

// TestReadKey: ReadKey opens the key file Open drew, before the store is
// opened, with Key or PrevKey, changing nothing; it reports no key for a
// plain store and ErrKeyMismatch for another key or none; DataKey is the
// same key.
func TestReadKey(t *testing.T) {
	dir := t.TempDir()
	if dk, err := ReadKey(nil, dir, crypt.Config{Key: "k"}); dk != nil || err != nil {
		t.Fatalf("no key file: %v %v", dk, err)
	}
	cfg := crypt.Config{Key: "the store key"}
	s, err := Open(dir, Options{Encryption: cfg})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.DataKey().NewSession()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := sess.Seal(nil, []byte("hello"), []byte("ad"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []crypt.Config{cfg, {Key: "new", PrevKey: cfg.Key}} {
		dk, err := ReadKey(nil, dir, c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got, err := dk.Open(nil, sealed, []byte("ad")); err != nil || string(got) != "hello" {
			t.Fatalf("%+v: the key read is not the store's: %v", c, err)
		}
	}
	for _, c := range []crypt.Config{{Key: "another"}, {}} {
		if _, err := ReadKey(nil, dir, c); !errors.Is(err, ErrKeyMismatch) {
			t.Fatalf("%+v: %v, want ErrKeyMismatch", c, err)
		}
	}
	// ReadKey with prev_key did not rewrap: the old key alone still opens.
	if _, err := ReadKey(nil, dir, cfg); err != nil {
		t.Fatalf("ReadKey rewrapped the key file: %v", err)
	}
	plain := t.TempDir()
	ps, err := Open(plain, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ps.DataKey() != nil {
		t.Fatal("a plain store has a data key")
	}
	ps.Close()
}
