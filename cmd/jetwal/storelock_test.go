package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestServeOneProcessPerStore: a second `jetwal serve` on a store that a
// running one serves exits 1 naming the directory and the holder's pid; a
// serve whose port is busy exits 1 and creates nothing on disk.
func TestServeOneProcessPerStore(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "jetwal")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	store := t.TempDir()
	first := startBinary(t, bin, store)

	second := exec.Command(bin, "serve", "--port", "0", "--addr", "127.0.0.1", "-js", "--store_dir", store)
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second serve on the same store: %v, want exit 1\n%s", err, out)
	}
	for _, want := range []string{filepath.Join(store, "jetstream"), "process " + strconv.Itoa(first.cmd.Process.Pid)} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("second serve's message does not name %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "Server is ready") {
		t.Fatalf("second serve reported ready:\n%s", out)
	}
	first.stop(t, os.Interrupt)

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	fresh := filepath.Join(t.TempDir(), "never-created")
	out, err = exec.Command(bin, "serve", "--port", port, "--addr", "127.0.0.1", "-js", "--store_dir", fresh).CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("serve on a busy port: %v, want exit 1\n%s", err, out)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("serve on a busy port left %s behind (stat: %v)\n%s", fresh, err, out)
	}
}
