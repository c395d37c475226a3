package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/jetwal/jetwal/internal/benchtool"
)

func benchCommand() command {
	return command{summary: "compare: benchmark jetwal against nats-server (see -h)", run: runBench}
}

// runBench is `jetwal bench compare [flags]`: benchtool.Compare runs the
// harness against this very binary.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "compare" {
		fmt.Fprintf(stderr, "usage: jetwal bench compare [jetwal-bench flags]\n\n"+
			"Runs jetwal-bench (built by `make bench-tool`) against this jetwal binary and\n"+
			"nats-server (built by `make peer`). `jetwal bench compare -h` lists its flags;\n"+
			"-quick finishes in under 2 minutes.\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	self, err := os.Executable()
	code := 1
	if err == nil {
		code, err = benchtool.Compare(ctx, self, args[1:], stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "jetwal bench: %v\n", err)
		return 1
	}
	return code
}
