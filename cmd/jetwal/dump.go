package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

func dumpCommand() command {
	return command{summary: "print the records of a segment file", run: runDump}
}

// runDump is `jetwal dump`: segment.Dump prints the records of one file.
func runDump(_ context.Context, args []string, stdout, stderr io.Writer) int {
	path, code, ok := parseOperand(flag.NewFlagSet("dump", flag.ContinueOnError), args, stderr, "usage: jetwal dump <segment file>\n\n"+
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
