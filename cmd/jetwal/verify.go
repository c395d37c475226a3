package main

// jetwal verify: an offline check of a store directory. The checks belong
// to the packages that own the formats (jetstream.CheckStore,
// raftlog.CheckKey); this prints what they find.

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/vfs"
)

func verifyCommand() command {
	return command{
		summary: "check every segment, index checkpoint and consumer state of a store",
		run:     runVerify,
	}
}

// checkPrefix is how each kind of finding is printed.
var checkPrefix = map[jetstream.CheckKind]string{
	jetstream.CheckStream: "stream ", jetstream.CheckSummary: "  ", jetstream.CheckNote: "note    ",
	jetstream.CheckDamage: "DAMAGED ", jetstream.CheckWrongKey: "KEY     ",
}

func runVerify(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("verify", flag.ContinueOnError)
	fl.SetOutput(stderr)
	key := fl.String("key", "", "the encryption key (jetstream { key }): also check every encrypted record's authentication tag")
	fl.Usage = func() {
		fmt.Fprint(stderr, "usage: jetwal verify [--key KEY] <store_dir>\n\n"+
			"Checks, without changing anything, every stream of every account under <store_dir>/jetstream:\n"+
			"meta.inf against meta.sum, every record checksum of every segment in msgs/,\n"+
			"msgs/index.ckpt, and the consumer state in obs/. Prints each damage with its file,\n"+
			"byte offset and the sequences it covers; exits 1 if anything is damaged.\n"+
			"An encrypted stream's structure is checked without the key; with --key (or the\n"+
			"JETWAL_VERIFY_KEY environment variable, which keeps the key out of the process list)\n"+
			"its records' tags are checked too.\n"+
			"A directory holding raftlog.meta is checked as a raft log store (package raftlog).\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return 2
	}
	dir := fl.Arg(0)
	k := crypt.Config{Key: cmp.Or(*key, os.Getenv("JETWAL_VERIFY_KEY"))}
	if raftlog.IsStore(vfs.Default, dir) {
		return verifyRaft(dir, k, stdout, stderr)
	}
	r, err := jetstream.CheckStore(vfs.Default, dir, k)
	if err != nil {
		fmt.Fprintf(stderr, "jetwal verify: %v\n", err)
		return 2
	}
	for _, f := range r.Findings {
		fmt.Fprintf(stdout, "%s%s\n", checkPrefix[f.Kind], f.Text)
	}
	fmt.Fprintf(stdout, "%d streams checked in %s: %d damaged, %d notes\n", r.Streams, dir, r.Damaged, r.Notes)
	switch {
	case r.Damaged > 0:
		return 1
	case r.WrongKey > 0:
		fmt.Fprintf(stderr, "jetwal verify: the key does not open %d streams: their records were not checked\n", r.WrongKey)
		return 2
	}
	return 0
}

// verifyRaft prints raftlog.CheckKey's report for a raft log store: the
// structure, and with a key every entry's tag. It returns 1 if anything
// is damaged, 2 if the directory cannot be read or the key does not open it.
func verifyRaft(dir string, key crypt.Config, stdout, stderr io.Writer) int {
	r, err := raftlog.CheckKey(vfs.Default, dir, key)
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
