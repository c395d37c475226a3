// Package testbin locates the external binaries tests drive: the pinned
// nats CLI that `make tools` installs into .bin/ at the module root. A test
// binary that finds it missing installs it there itself, once, so plain
// `go test ./...` on a fresh clone works as `make test` does.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
)

// natsCLIPackage is what `make tools` installs; its version is the
// Makefile's NATSCLI_VERSION, the one place the pin is written.
const natsCLIPackage = "github.com/nats-io/natscli/nats"

var natsCLI = sync.OnceValues(func() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	version, err := MakefileVar(root, "NATSCLI_VERSION")
	if err != nil {
		return "", err
	}
	return ensure(filepath.Join(root, ".bin"), "nats", func(gobin string) error {
		return GoInstall(gobin, natsCLIPackage+"@"+version)
	})
})

// NatsCLI returns the path of the pinned nats CLI: $JETWAL_NATS_CLI, or
// .bin/nats at the module root, which it installs (go install of the
// Makefile's NATSCLI_VERSION, through the Go module proxy) if it is missing.
// It fails the test (never skips) when neither works.
func NatsCLI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("JETWAL_NATS_CLI"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("JETWAL_NATS_CLI=%s: %v (run make tools, or unset it to let the tests install the CLI)", p, err)
		}
		return p
	}
	p, err := natsCLI()
	if err != nil {
		t.Fatalf("nats CLI: %v", err)
	}
	return p
}

// MakefileVar returns the value of a `NAME := value` line of the Makefile
// at the module root.
func MakefileVar(root, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*:?=\s*(\S+)\s*$`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("Makefile sets no %s", name)
	}
	return string(m[1]), nil
}

// GoInstall runs `go install pkgAtVersion` with GOBIN=gobin.
func GoInstall(gobin, pkgAtVersion string) error {
	cmd := exec.Command("go", "install", pkgAtVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go install %s (GOBIN=%s): %v\n%s", pkgAtVersion, gobin, err, out)
	}
	return nil
}

// ensure returns dir/name, first calling install to build it if it is
// missing. Under a file lock on dir/.name.lock, so the test binaries of
// parallel packages install it once between them; install writes into a
// fresh directory under dir and the binary is renamed into place, so no
// process ever runs a half-written file.
func ensure(dir, name string, install func(gobin string) error) (string, error) {
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, "."+name+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(p); err == nil {
		return p, nil // another process installed it while we waited
	}
	tmp, err := os.MkdirTemp(dir, ".install-"+name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := install(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, name), p); err != nil {
		return "", fmt.Errorf("install %s: %w", name, err)
	}
	return p, nil
}

// ModuleRoot is the nearest directory above the working directory that
// holds a go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
