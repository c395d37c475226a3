package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/jetwal/jetwal/server/auth"
)

// TestReadmeExample loads the example configuration of the README (with
// the TLS files pointed at generated certificates), so the documented
// example keeps working and holds nothing jetwal ignores.
func TestReadmeExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## Running in production")
	if !ok {
		t.Fatal("README has no Running in production section")
	}
	_, rest, ok = strings.Cut(rest, "```conf\n")
	if !ok {
		t.Fatal("no ```conf block")
	}
	example, _, _ := strings.Cut(rest, "```")
	certs := testcert.New(t)
	example = strings.ReplaceAll(example, "/etc/jetwal/tls", filepath.Dir(certs.CAFile))
	t.Setenv("ORDERS_PASSWORD", "o")
	t.Setenv("WORKER_PASSWORD", "w")
	t.Setenv("OPS_PASSWORD", "p")
	c := load(t, "jetwal.conf", example)
	if len(c.Warnings) != 0 {
		t.Fatalf("the example has ignored settings: %v", c.Warnings)
	}
	if c.TLS == nil || !c.JetStream.Enabled || c.HTTPPort != 8222 || len(c.Auth.Users) != 4 || c.SystemAccount != "SYS" {
		t.Fatalf("%+v", c)
	}
	a, err := auth.New(c.Auth)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(auth.Credentials{User: "admin", Password: "change-me"}); err != nil {
		t.Fatalf("the documented admin password does not match its hash: %v", err)
	}
}
