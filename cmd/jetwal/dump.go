package main

// jetwal dump: print the records of one segment file.

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

func dumpCommand() command {
	return command{
		summary: "print the records of a segment file",
		run:     runDump,
	}
}

func runDump(_ context.Context, args []string, stdout, stderr io.Writer) int {
	path, code, ok := parseOneArg("dump", args, stderr, "usage: jetwal dump <segment file>\n\n"+
		"Prints one line per record: offset, sequence, time, subject, header and data\n"+
		"sizes and the record's xxhash64; tombstones with the range they delete; and\n"+
		"each damaged range with its offset. Exits 1 if the file is damaged.\n")
	if !ok {
		return code
	}
	seg, err := segment.Open(vfs.Default, path, false)
	if err != nil {
		fmt.Fprintf(stderr, "jetwal dump: %v\n", err)
		return 1
	}
	defer seg.Close()
	fmt.Fprintf(stdout, "segment %s base %d created %s compressed %v\n",
		path, seg.Base(), time.Unix(0, seg.Created()).UTC().Format(time.RFC3339Nano), seg.Compressed())
	fmt.Fprintf(stdout, "%-10s %-10s %-35s %-8s %-8s %-16s %s\n", "offset", "seq", "time", "hdr", "data", "checksum", "subject")
	damaged, records := 0, 0
	res, err := seg.ScanDamage(segment.HeaderSize, 0, func(off int64, r *segment.Record) error {
		records++
		ts := time.Unix(0, r.Time).UTC().Format(time.RFC3339Nano)
		sum := recordChecksum(r)
		switch {
		case r.Tombstone():
			c := r.TombstoneCount()
			fmt.Fprintf(stdout, "%-10d %-10s %-35s %-8s %-8s %016x tombstone: deletes %d-%d\n",
				off, "-", ts, "-", "-", sum, r.Seq, r.Seq+c-1)
		default:
			subj := strconv.Quote(string(r.Subject))
			if r.Flags&segment.FlagErased != 0 {
				subj = "(erased)"
			}
			fmt.Fprintf(stdout, "%-10d %-10d %-35s %-8d %-8d %016x %s\n",
				off, r.Seq, ts, len(r.Header), len(r.Data), sum, subj)
		}
		return nil
	}, func(d segment.Damage) {
		damaged++
		next := "nothing valid after it"
		if d.Resync >= 0 {
			next = fmt.Sprintf("next valid record at offset %d", d.Resync)
		}
		fmt.Fprintf(stdout, "DAMAGED %v; %s\n", d.Err, next)
	})
	if err != nil {
		fmt.Fprintf(stderr, "jetwal dump: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d records, end of data at offset %d, %d damaged ranges\n", records, res.End, damaged)
	if damaged > 0 {
		return 1
	}
	return 0
}

// recordChecksum is the record's stored xxhash64: a record Scan returned
// passed its checksum, so re-encoding it reproduces the stored value (this
// works for compressed segments too, whose raw record bytes are not on disk).
func recordChecksum(r *segment.Record) uint64 {
	b := segment.AppendRecord(nil, r.Flags, r.Seq, r.Time, string(r.Subject), r.Header, r.Data)
	return binary.LittleEndian.Uint64(b[len(b)-segment.ChecksumSize:])
}

// parseOneArg parses the arguments of a command that takes one operand and
// no flags. ok is false when the command should exit at once with code:
// 0 after -h, 2 after a usage error (the usage is printed to stderr).
func parseOneArg(name string, args []string, stderr io.Writer, usage string) (arg string, code int, ok bool) {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", 0, false
		}
		return "", 2, false
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return "", 2, false
	}
	return fl.Arg(0), 0, true
}
