package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/internal/verify"
	"github.com/jetwal/jetwal/vfs"
)

func verifyCommand() command {
	return command{summary: "check every segment, index checkpoint and consumer state of a store", run: runVerify}
}

// runVerify is `jetwal verify`: package internal/verify checks and prints.
func runVerify(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("verify", flag.ContinueOnError)
	key := fl.String("key", "", "the encryption key (jetstream { key }): also check every encrypted record's authentication tag")
	dir, code, ok := parseOperand(fl, args, stderr, "usage: jetwal verify [--key KEY] <store_dir>\n\n"+
		"Checks, without changing anything, every stream of every account under <store_dir>/jetstream:\n"+
		"meta.inf against meta.sum, every record checksum of every segment in msgs/,\n"+
		"msgs/index.ckpt, and the consumer state in obs/. Prints each damage with its file,\n"+
		"byte offset and the sequences it covers; exits 1 if anything is damaged.\n"+
		"An encrypted stream's structure is checked without the key; with --key (or the\n"+
		"JETWAL_VERIFY_KEY environment variable, which keeps the key out of the process list)\n"+
		"its records' tags are checked too.\n"+
		"A directory holding raftlog.meta is checked as a raft log store (package raftlog).\n\n")
	if !ok {
		return code
	}
	err := verify.Dir(vfs.Default, dir, crypt.Config{Key: cmp.Or(*key, os.Getenv("JETWAL_VERIFY_KEY"))}, stdout)
	switch {
	case errors.Is(err, verify.ErrDamaged):
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "jetwal verify: %v\n", err)
		return 2
	}
	return 0
}

// parseOperand parses the flags of fl and the one operand that follows
// them. ok is false when the command should exit at once with code: 0
// after -h, 2 after a usage error (usage and fl's defaults go to stderr).
func parseOperand(fl *flag.FlagSet, args []string, stderr io.Writer, usage string) (arg string, code int, ok bool) {
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, usage); fl.PrintDefaults() }
	err := fl.Parse(args)
	if err == nil && fl.NArg() != 1 {
		fl.Usage()
		err = errors.New("want one operand")
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return "", 0, false
	case err != nil:
		return "", 2, false
	}
	return fl.Arg(0), 0, true
}
