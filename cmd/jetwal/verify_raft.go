package main

// jetwal verify on a raft log store (package raftlog): a directory holding
// raftlog.meta is checked with raftlog.Check instead of as a JetStream store.

import (
	"fmt"
	"io"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/vfs"
)

// verifyRaft prints raftlog.CheckKey's report for dir: the structure, and
// with a key every entry's tag. It returns 1 if anything is damaged, 2 if
// the directory cannot be read or the key does not open it.
func verifyRaft(fs vfs.FS, dir string, key crypt.Config, stdout, stderr io.Writer) int {
	r, err := raftlog.CheckKey(fs, dir, key)
	if err != nil {
		fmt.Fprintf(stderr, "jetwal verify: %v\n", err)
		return 2
	}
	for _, n := range r.Notes {
		fmt.Fprintf(stdout, "note    %s\n", n)
	}
	for _, d := range r.Damage {
		fmt.Fprintf(stdout, "DAMAGED %s\n", d)
	}
	fmt.Fprintf(stdout, "raft log store %s: %d segments, indexes %d-%d: %d damaged, %d notes\n",
		dir, r.Segments, r.First, r.Last, len(r.Damage), len(r.Notes))
	if !r.OK() {
		return 1
	}
	return 0
}
