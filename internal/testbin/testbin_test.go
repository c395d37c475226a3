package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestEnsureInstallsOnce: callers that find the binary missing all at once
// (each as its own flock holder, as parallel test binaries are) run one
// install between them, and every one gets the installed file.
func TestEnsureInstallsOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".bin")
	var installs atomic.Int32
	install := func(gobin string) error {
		installs.Add(1)
		return os.WriteFile(filepath.Join(gobin, "tool"), []byte("#!/bin/sh\necho ok\n"), 0o755)
	}
	var wg sync.WaitGroup
	paths := make([]string, 8)
	errs := make([]error, 8)
	for i := range paths {
		wg.Go(func() { paths[i], errs[i] = ensure(dir, "tool", install) })
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil || paths[i] != filepath.Join(dir, "tool") {
			t.Fatalf("caller %d: %q, %v", i, paths[i], errs[i])
		}
	}
	if n := installs.Load(); n != 1 {
		t.Fatalf("%d installs, want 1", n)
	}
	out, err := exec.Command(paths[0]).Output()
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("installed tool: %q, %v", out, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".install-*"))
	if len(left) != 0 {
		t.Fatalf("install directories left behind: %v", left)
	}
}

// TestEnsureFailedInstall: a failed install leaves no binary, so the next
// caller tries again.
func TestEnsureFailedInstall(t *testing.T) {
	dir := t.TempDir()
	if _, err := ensure(dir, "tool", func(string) error { return os.ErrPermission }); err == nil {
		t.Fatal("failed install reported success")
	}
	if _, err := os.Stat(filepath.Join(dir, "tool")); !os.IsNotExist(err) {
		t.Fatalf("after a failed install: %v", err)
	}
}

// TestNatsCLIVersionFromMakefile: the version tests install is the
// Makefile's pin.
func TestNatsCLIVersionFromMakefile(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	v, err := MakefileVar(root, "NATSCLI_VERSION")
	if err != nil || len(v) < 2 || v[0] != 'v' {
		t.Fatalf("NATSCLI_VERSION = %q, %v", v, err)
	}
}
