package wal

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// Callback-less appends share one queued waiter without SyncAlways
// (addWaiterLocked); callbacks in between keep their own entries. Every
// append must still become visible, release its bytes in flight, and have
// its callback called with its own sequence, in order.
func TestWaitersMergeCallbackless(t *testing.T) {
	for _, mode := range []SyncMode{SyncNever, SyncInterval, SyncAlways} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			s, err := Open(t.TempDir(), Options{Sync: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const n = 3000
			var got []uint64
			var calls atomic.Int64
			for i := 1; i <= n; i++ {
				var done store.AppendDone
				if i%500 == 0 {
					want := uint64(i)
					done = func(seq uint64, _ int64, err error) {
						if err != nil || seq != want {
							t.Errorf("callback of append %d: seq %d, err %v", want, seq, err)
						}
						got = append(got, seq) // callbacks run one at a time
						calls.Add(1)
					}
				}
				if err := s.AppendAsync("merge.subject", nil, []byte{byte(i)}, done); err != nil {
					t.Fatal(err)
				}
			}
			// A last append with a callback: once it returns, every earlier
			// append is visible (commits release in sequence order).
			seq, _, err := s.Append("merge.subject", nil, []byte("last"))
			if err != nil || seq != n+1 {
				t.Fatalf("Append = %d, %v", seq, err)
			}
			if c := calls.Load(); c != n/500 {
				t.Fatalf("%d callbacks called, want %d", c, n/500)
			}
			for i, q := range got {
				if q != uint64(500*(i+1)) {
					t.Fatalf("callbacks out of order: %v", got)
				}
			}
			var m store.Msg
			for _, q := range []uint64{1, 499, 500, 501, n, n + 1} {
				if err := s.Load(q, &m); err != nil || m.Seq != q {
					t.Fatalf("Load(%d) = seq %d, %v", q, m.Seq, err)
				}
			}
			s.mu.Lock()
			pend, vis, waiting := s.pendB, s.visible, len(s.waiters)
			s.mu.Unlock()
			if pend != 0 || vis != n+1 || waiting != 0 {
				t.Fatalf("after the last commit: %d bytes in flight, visible %d, %d waiters; want 0, %d, 0", pend, vis, waiting, n+1)
			}
		})
	}
}
