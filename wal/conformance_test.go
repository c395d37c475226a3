package wal

import (
	"testing"

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
