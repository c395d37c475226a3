package raftstore_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/raftstore"
)

// echoFSM returns each command as its result.
type echoFSM struct{}

func (echoFSM) Apply(l *raft.Log) any               { return string(l.Data) }
func (echoFSM) Snapshot() (raft.FSMSnapshot, error) { return noSnapshot{}, nil }
func (echoFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

type noSnapshot struct{}

func (noSnapshot) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (noSnapshot) Release()                             {}

// Example runs a single-node raft cluster whose log and stable store is a
// jetwal store: the same value goes in both places of raft.NewRaft.
func Example() {
	dir, err := os.MkdirTemp("", "raftstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := raftstore.Open(filepath.Join(dir, "raft"), raftstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(dir, "snapshots"), 2, io.Discard)
	if err != nil {
		log.Fatal(err)
	}
	addr, transport := raft.NewInmemTransport("")
	conf := raft.DefaultConfig()
	conf.LocalID = "node1"
	conf.LogOutput = io.Discard

	r, err := raft.NewRaft(conf, echoFSM{}, store, store, snaps, transport)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Shutdown()
	boot := raft.Configuration{Servers: []raft.Server{{ID: conf.LocalID, Address: addr}}}
	if err := r.BootstrapCluster(boot).Error(); err != nil {
		log.Fatal(err)
	}
	for r.State() != raft.Leader {
		time.Sleep(10 * time.Millisecond)
	}

	f := r.Apply([]byte("hello, raft"), 5*time.Second)
	if err := f.Error(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("applied:", f.Response())
	last, _ := store.LastIndex()
	var entry raft.Log
	if err := store.GetLog(last, &entry); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stored at index %d: %s\n", entry.Index, entry.Data)
	// Output:
	// applied: hello, raft
	// stored at index 3: hello, raft
}
