package main

// jetwal dump: print the records of one segment file.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

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
	damaged, err := segment.Dump(vfs.Default, path, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "jetwal dump: %v\n", err)
		return 1
	}
	if damaged > 0 {
		return 1
	}
	return 0
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
