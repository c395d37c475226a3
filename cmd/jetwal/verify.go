package main

// jetwal verify: an offline check of a store directory.

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

func verifyCommand() command {
	return command{
		summary: "check every segment, index checkpoint and consumer state of a store",
		run:     runVerify,
	}
}

// verifier collects what one run found.
type verifier struct {
	out     io.Writer
	fs      vfs.FS
	key     crypt.Config // --key: check encrypted records' tags too
	damaged int
	notes   int
	wrong   int // streams the key does not open (not damage: exit 2)
}

// check sorts an error of a check: a key that does not open the stream
// is not damage.
func (v *verifier) check(err error) {
	if errors.Is(err, wal.ErrKeyMismatch) {
		v.wrong++
		fmt.Fprintf(v.out, "KEY     %v\n", err)
		return
	}
	v.damage("%v", err)
}

func (v *verifier) damage(format string, args ...any) {
	v.damaged++
	fmt.Fprintf(v.out, "DAMAGED "+format+"\n", args...)
}

func (v *verifier) note(format string, args ...any) {
	v.notes++
	fmt.Fprintf(v.out, "note    "+format+"\n", args...)
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
	k := cmp.Or(*key, os.Getenv("JETWAL_VERIFY_KEY"))
	if raftlog.IsStore(vfs.Default, dir) {
		return verifyRaft(vfs.Default, dir, crypt.Config{Key: k}, stdout, stderr)
	}
	dirs, err := jetstream.StreamDirs(vfs.Default, dir)
	if err != nil {
		fmt.Fprintf(stderr, "jetwal verify: %v\n", err)
		return 2
	}
	v := &verifier{out: stdout, fs: vfs.Default, key: crypt.Config{Key: k}}
	for _, d := range dirs {
		v.stream(d)
	}
	fmt.Fprintf(stdout, "%d streams checked in %s: %d damaged, %d notes\n", len(dirs), dir, v.damaged, v.notes)
	switch {
	case v.damaged > 0:
		return 1
	case v.wrong > 0:
		fmt.Fprintf(stderr, "jetwal verify: the key does not open %d streams: their records were not checked\n", v.wrong)
		return 2
	}
	return 0
}

// stream prints the checks of one stream directory, each made by the
// package that owns the format: jetstream (meta.inf), wal (msgs/) and
// consumerstate (obs/).
func (v *verifier) stream(dir string) {
	fmt.Fprintf(v.out, "stream %s\n", filepath.Base(dir))
	if note, err := jetstream.CheckStreamMeta(v.fs, dir); err != nil {
		v.damage("%v", err)
	} else if note != "" {
		v.note("%s", note)
	}
	msgs := filepath.Join(dir, "msgs")
	if fi, err := v.fs.Stat(msgs); err != nil || !fi.IsDir {
		v.damage("%s: missing", msgs)
	} else if rep, err := wal.CheckKey(v.fs, msgs, v.key); err != nil {
		v.check(err)
	} else {
		for _, f := range rep.Findings {
			switch f.Kind {
			case wal.Damage:
				v.damage("%s", f.Text)
			case wal.Note:
				v.note("%s", f.Text)
			default:
				fmt.Fprintf(v.out, "  %s\n", f.Text)
			}
		}
	}
	obs := filepath.Join(dir, "obs")
	if fi, err := v.fs.Stat(obs); err == nil && fi.IsDir {
		// With --key, the consumers' sealed records are opened with the
		// stream's data key (held in msgs/, wrapped by the key).
		var dk *crypt.DataKey
		if v.key.Enabled() {
			if dk, err = wal.ReadKey(v.fs, msgs, v.key); err != nil {
				v.check(err)
				return
			}
		}
		if err := consumerstate.CheckKey(obs, v.fs, dk); err != nil {
			for _, e := range splitJoined(err) {
				v.damage("%v", e)
			}
		}
	}
}

// splitJoined undoes errors.Join so each problem prints on its own line.
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitJoined(e)...)
		}
		return out
	}
	return []error{err}
}
