package enginepeer

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/nats-io/nats-server/v2/server"
)

// The benchmarks read server.StoreMsg's unexported fields through a copy of
// its layout; a release that changed the struct would read garbage.
func TestStoreMsgLayout(t *testing.T) {
	if a, b := unsafe.Sizeof(server.StoreMsg{}), unsafe.Sizeof(storeMsg{}); a != b {
		t.Fatalf("server.StoreMsg is %d bytes, the layout copied here %d", a, b)
	}
}

// TestStoresAgree runs the benchmarks' operations on both stores and
// checks what they return, so that a benchmark measures the work it names
// (and the linked nats-server functions are the ones meant).
func TestStoresAgree(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			e, err := st.open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer e.close()
			const n = 500
			for i := 1; i <= n; i++ {
				if err := e.append("agree.subject", []byte(fmt.Sprintf("payload %d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.settle(); err != nil {
				t.Fatal(err)
			}
			for _, seq := range []uint64{1, 2, 250, n} {
				got, err := e.load(seq)
				if err != nil {
					t.Fatalf("load %d: %v", seq, err)
				}
				if want := fmt.Sprintf("payload %d", seq); !bytes.Equal(got, []byte(want)) {
					t.Fatalf("load %d: %q, want %q", seq, got, want)
				}
			}
			if got, err := e.next(42); err != nil || got != 42 {
				t.Fatalf("next(42) = %d, %v", got, err)
			}
			if err := e.purge(); err != nil {
				t.Fatal(err)
			}
			if _, err := e.load(1); err == nil {
				t.Fatal("load 1 after purge succeeded")
			}
			if err := e.append("agree.subject", []byte("after")); err != nil {
				t.Fatal(err)
			}
			if err := e.settle(); err != nil {
				t.Fatal(err)
			}
			if got, err := e.next(1); err != nil || got != n+1 {
				t.Fatalf("next(1) after purge = %d, %v; want %d", got, err, n+1)
			}
		})
	}
}
