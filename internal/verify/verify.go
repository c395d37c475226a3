// Package verify is `jetwal verify`'s offline check of a store directory,
// without changing anything. The checks belong to the packages that own
// the formats (jetstream.CheckStore, raftlog.CheckKey); this prints what
// they find.
package verify

import (
	"errors"
	"fmt"
	"io"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/vfs"
)

// ErrDamaged is Dir's error when the check found damage (all of it is
// printed).
var ErrDamaged = errors.New("the store is damaged")

// checkPrefix is how each kind of finding is printed.
var checkPrefix = map[jetstream.CheckKind]string{
	jetstream.CheckStream: "stream ", jetstream.CheckSummary: "  ", jetstream.CheckNote: "note    ",
	jetstream.CheckDamage: "DAMAGED ", jetstream.CheckWrongKey: "KEY     ",
}

// Dir checks the store in dir — a JetStream store directory (or its
// "jetstream" directory), or a raft log store (a directory holding
// raftlog.meta) — and prints its findings to w, one a line, then a
// summary. With key, every encrypted record's authentication tag is
// checked too. It returns ErrDamaged if anything is damaged, another
// error if dir cannot be read or the key does not open a stream.
func Dir(fsys vfs.FS, dir string, key crypt.Config, w io.Writer) error {
	if raftlog.IsStore(fsys, dir) {
		return raftStore(fsys, dir, key, w)
	}
	r, err := jetstream.CheckStore(fsys, dir, key)
	if err != nil {
		return err
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%s%s\n", checkPrefix[f.Kind], f.Text)
	}
	fmt.Fprintf(w, "%d streams checked in %s: %d damaged, %d notes\n", r.Streams, dir, r.Damaged, r.Notes)
	switch {
	case r.Damaged > 0:
		return ErrDamaged
	case r.WrongKey > 0:
		return fmt.Errorf("the key does not open %d streams: their records were not checked", r.WrongKey)
	}
	return nil
}

// raftStore prints raftlog.CheckKey's report for a raft log store: the
// structure, and with a key every entry's tag.
func raftStore(fsys vfs.FS, dir string, key crypt.Config, w io.Writer) error {
	r, err := raftlog.CheckKey(fsys, dir, key)
	if err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note    %s\n", n)
	}
	for _, d := range r.Damage {
		fmt.Fprintf(w, "DAMAGED %s\n", d)
	}
	fmt.Fprintf(w, "raft log store %s: %d segments, indexes %d-%d: %d damaged, %d notes\n",
		dir, r.Segments, r.First, r.Last, len(r.Damage), len(r.Notes))
	if !r.OK() {
		return ErrDamaged
	}
	return nil
}
