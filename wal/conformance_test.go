package wal

import (
	"testing"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/store/storetest"
)

// The shared store suite, once per sync mode, with small segments so rolls,
// head drops and multi-segment reads are exercised.
func TestConformance(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, l store.Limits) store.StreamStore {
				s, err := Open(t.TempDir(), Options{Sync: mode, Limits: l, SegmentSize: 8 << 10})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
}

func TestConformancePersistent(t *testing.T) {
	storetest.RunPersistent(t, func(t *testing.T, dir string, l store.Limits) store.StreamStore {
		s, err := Open(dir, Options{Sync: SyncNever, Limits: l, SegmentSize: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// The same suites against encrypted stores, one per cipher (encrypt.go),
// with compression on so sealed segments are compressed too.
func TestConformanceEncrypted(t *testing.T) {
	for _, c := range []crypt.Cipher{crypt.ChaCha, crypt.AES} {
		t.Run(c.String(), func(t *testing.T) {
			enc := crypt.Config{Key: "conformance key", Cipher: c}
			storetest.Run(t, func(t *testing.T, l store.Limits) store.StreamStore {
				s, err := Open(t.TempDir(), Options{Sync: SyncNever, Limits: l, SegmentSize: 8 << 10, Compress: true, Encryption: enc})
				if err != nil {
					t.Fatal(err)
				}
				if !s.Encrypted() || s.Cipher() != c {
					t.Fatalf("store not encrypted with %v", c)
				}
				t.Cleanup(func() { s.Close() })
				return s
			})
			storetest.RunPersistent(t, func(t *testing.T, dir string, l store.Limits) store.StreamStore {
				s, err := Open(dir, Options{Sync: SyncNever, Limits: l, SegmentSize: 8 << 10, Encryption: enc})
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}
