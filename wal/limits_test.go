package wal

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// TestOverwriteNeverHidesSubject: with one message per subject (a KV
// bucket), a reader of the subject's last message always finds the old
// value or the new one while overwrites are being made durable; the old
// message is not evicted before the new one is visible.
func TestOverwriteNeverHidesSubject(t *testing.T) {
	for _, l := range []store.Limits{{MaxMsgsPerSubject: 1}, {MaxMsgs: 1}} {
		t.Run(fmt.Sprintf("%+v", l), func(t *testing.T) {
			s, err := Open(t.TempDir(), Options{Sync: SyncAlways, Limits: l})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, _, err := s.Append("k", nil, []byte("v0")); err != nil {
				t.Fatal(err)
			}
			const n = 300
			var wg sync.WaitGroup
			wg.Add(n)
			done := make(chan struct{})
			go func() {
				for i := 1; i <= n; i++ {
					if err := s.AppendAsync("k", nil, []byte(fmt.Sprintf("v%d", i)), func(uint64, int64, error) { wg.Done() }); err != nil {
						t.Error(err)
						wg.Done()
					}
				}
				wg.Wait()
				close(done)
			}()
			var m store.Msg
			misses, reads := 0, 0
			for {
				select {
				case <-done:
					if misses > 0 {
						t.Fatalf("%d of %d reads found no message on the subject", misses, reads)
					}
					if err := s.LoadLast("k", &m); err != nil || string(m.Data) != fmt.Sprintf("v%d", n) {
						t.Fatalf("last %q %v", m.Data, err)
					}
					if st := s.State(); st.Msgs != 1 {
						t.Fatalf("%d messages after the overwrites", st.Msgs)
					}
					return
				default:
				}
				reads++
				if err := s.LoadLast("k", &m); errors.Is(err, store.ErrNotFound) {
					misses++
				} else if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
