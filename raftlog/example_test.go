package raftlog_test

import (
	"fmt"
	"log"

	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/vfs"
)

// Example stores a batch, compacts a prefix, replaces a conflicting tail and
// keeps a term in the stable store, the way a raft module uses the engine.
func Example() {
	s, err := raftlog.Open(vfs.NewMemFS(), "/raft", raftlog.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	batch := make([]raftlog.Entry, 10)
	for i := range batch {
		batch[i] = raftlog.Entry{Index: uint64(i + 1), Term: 1, Data: []byte(fmt.Sprintf("cmd %d", i+1))}
	}
	if err := s.StoreEntries(batch); err != nil { // durable when it returns
		log.Fatal(err)
	}
	if err := s.DeleteRange(1, 4); err != nil { // compaction after a snapshot
		log.Fatal(err)
	}
	if err := s.DeleteRange(9, 10); err != nil { // a new leader's conflicting tail
		log.Fatal(err)
	}
	if err := s.StoreEntries([]raftlog.Entry{{Index: 9, Term: 2, Data: []byte("new cmd 9")}}); err != nil {
		log.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		log.Fatal(err)
	}

	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	var e raftlog.Entry
	if err := s.GetEntry(last, &e); err != nil {
		log.Fatal(err)
	}
	term, _, _ := s.GetUint64([]byte("CurrentTerm"))
	fmt.Printf("entries %d-%d, last: term %d %q, current term %d\n", first, last, e.Term, e.Data, term)
	// Output: entries 5-9, last: term 2 "new cmd 9", current term 2
}
