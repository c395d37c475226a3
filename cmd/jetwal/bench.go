package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// benchCommand is `jetwal bench compare [flags]`: the side-by-side
// comparison with nats-server. The harness is its own program
// (bench/cmd/jetwal-bench, a nested module, so the engine's go.mod does not
// carry its chart and progress-bar dependencies); this command finds it and
// the peer server next to the jetwal binary (where `make bench-tool peer`
// puts them) or on PATH, and runs it against this very binary.
func benchCommand() command {
	return command{
		summary: "compare: benchmark jetwal against nats-server (see -h)",
		run:     runBench,
	}
}

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
	args = args[1:]
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "jetwal bench: %v\n", err)
		return 1
	}
	tool, err := findBeside(self, "jetwal-bench", "make bench-tool")
	if err != nil {
		fmt.Fprintf(stderr, "jetwal bench: %v\n", err)
		return 1
	}
	if !hasFlag(args, "jetwal") {
		args = append([]string{"-jetwal", self}, args...)
	}
	if !hasFlag(args, "nats-server") && !hasFlag(args, "h") && !hasFlag(args, "help") {
		peer, err := findBeside(self, "nats-server", "make peer")
		if err != nil {
			fmt.Fprintf(stderr, "jetwal bench: %v\n", err)
			return 1
		}
		args = append([]string{"-nats-server", peer}, args...)
	}
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = stdout, stderr, os.Stdin
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "jetwal bench: %v\n", err)
		return 1
	}
	return 0
}

// findBeside looks for an executable named name in the directory of self,
// then on PATH.
func findBeside(self, name, hint string) (string, error) {
	p := filepath.Join(filepath.Dir(self), name)
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found next to %s or on PATH (run %s)", name, self, hint)
}

// hasFlag reports whether args set flag name (-name, --name, -name=v).
func hasFlag(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		a = strings.TrimLeft(a, "-")
		return a == name || strings.HasPrefix(a, name+"=")
	})
}
