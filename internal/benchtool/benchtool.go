// Package benchtool runs `jetwal bench compare`: the side-by-side
// comparison with nats-server. The harness is its own program
// (bench/cmd/jetwal-bench, a nested module, so the engine's go.mod does not
// carry its chart and progress-bar dependencies); Compare finds it and the
// peer server next to the jetwal binary (where `make bench-tool peer`
// puts them) or on PATH, and runs it against that very binary.
package benchtool

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

// Compare runs jetwal-bench with args against the jetwal binary self (and
// the nats-server beside it unless args name one) and returns its exit
// code. The error tells why it could not run at all.
func Compare(ctx context.Context, self string, args []string, stdout, stderr io.Writer) (int, error) {
	tool, err := findBeside(self, "jetwal-bench", "make bench-tool")
	if err != nil {
		return 0, err
	}
	if !hasFlag(args, "jetwal") {
		args = append([]string{"-jetwal", self}, args...)
	}
	if !hasFlag(args, "nats-server") && !hasFlag(args, "h") && !hasFlag(args, "help") {
		peer, err := findBeside(self, "nats-server", "make peer")
		if err != nil {
			return 0, err
		}
		args = append([]string{"-nats-server", peer}, args...)
	}
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = stdout, stderr, os.Stdin
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), nil
		}
		return 0, err
	}
	return 0, nil
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
