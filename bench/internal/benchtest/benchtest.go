package benchtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
)

// Environment variables that override where the tests look for binaries.
const (
	EnvNATSServer = "JETWAL_BENCH_NATS_SERVER"
	EnvJetwal     = "JETWAL_BENCH_JETWAL"
)

// repoBin returns <repo>/.bin/name, found by walking up from the working
// directory to the directory holding the bench module's parent go.mod.
func repoBin(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if filepath.Base(dir) == "bench" {
			if _, err := os.Stat(filepath.Join(dir, "..", "go.mod")); err == nil {
				return filepath.Join(dir, "..", ".bin", name)
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("benchtest: cannot find the bench module above the working directory")
		}
		dir = parent
	}
}

// binary resolves a server binary from env, else <repo>/.bin/name, else
// PATH, and fails the test if none is executable.
func binary(t testing.TB, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := repoBin(t, name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if lp, err := exec.LookPath(name); err == nil {
		return lp
	}
	t.Fatalf("benchtest: %s not found at %s or on PATH (run `make peer build`, or set %s)", name, p, env)
	return ""
}

// NATSServer returns the spec of the pinned nats-server binary.
func NATSServer(t testing.TB) proc.Spec {
	return proc.Spec{Name: "nats-server", Kind: proc.KindNATSServer, Path: binary(t, EnvNATSServer, "nats-server")}
}

// Jetwal returns the spec of the jetwal binary.
func Jetwal(t testing.TB) proc.Spec {
	return proc.Spec{Name: "jetwal", Kind: proc.KindJetwal, Path: binary(t, EnvJetwal, "jetwal")}
}

// Start starts spec in mode with its store under t.TempDir and removes it
// when the test ends.
func Start(t testing.TB, spec proc.Spec, mode proc.Mode) *proc.Server {
	t.Helper()
	s, err := proc.New(spec, mode, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Remove(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}
