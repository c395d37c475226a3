package wal_test

import (
	"fmt"
	"log"
	"os"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// A server opens one Store per file-backed stream and uses it through the
// store.StreamStore interface.
func Example() {
	dir, err := os.MkdirTemp("", "wal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	var s store.StreamStore
	s, err = wal.Open(dir, wal.Options{
		Sync:   wal.SyncAlways, // the default: Append returns once durable
		Limits: store.Limits{MaxMsgsPerSubject: 2},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range []string{"created", "paid", "shipped"} {
		if _, _, err := s.Append("orders.42", nil, []byte(p)); err != nil {
			log.Fatal(err)
		}
	}
	if _, _, err := s.Append("orders.43", nil, []byte("created")); err != nil {
		log.Fatal(err)
	}

	var m store.Msg
	if err := s.LoadLast("orders.42", &m); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("last orders.42: seq %d %s\n", m.Seq, m.Data)
	if err := s.LoadNext("orders.*", 1, &m); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("first orders.*: seq %d %s\n", m.Seq, m.Data)
	st := s.State()
	fmt.Printf("msgs %d, first %d, last %d\n", st.Msgs, st.FirstSeq, st.LastSeq)
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// last orders.42: seq 3 shipped
	// first orders.*: seq 2 paid
	// msgs 3, first 2, last 4
}
