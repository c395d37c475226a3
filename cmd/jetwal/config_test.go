package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jetwal.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigErrorsOnBinary(t *testing.T) {
	bin := buildJetwal(t)
	for _, tc := range []struct{ conf, want string }{
		{"port: 4222\nmax_payload: \"huge\"\n", ":2:"},
		{"port: 4222\nauthorization {\n  users: [ {user: a, password: b, permissions: {publish: \"a..b\"}} ]\n}\n", `:3:35: authorization.users[0].permissions: publish permission: invalid subject "a..b"`},
		{"port: 4222\nhost = {\n", ":3: Parse error on line 3"},
		{"port: 4222\naccounts {\n  A: {\n    exports: [ {stream: \"x.>\"} ]\n  }\n}\n", ":4:5: accounts.A.exports: not supported by jetwal: accounts cannot share subjects or services"},
	} {
		conf := writeConf(t, tc.conf)
		cmd := exec.Command(bin, "serve", "-c", conf)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("%q: exit %v, want 1\n%s", tc.conf, err, out)
		}
		if !strings.Contains(string(out), conf+tc.want) {
			t.Errorf("%q: output lacks %q:\n%s", tc.conf, conf+tc.want, out)
		}
	}
}

// buildJetwal builds the command into a temporary directory.
func buildJetwal(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "jetwal")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestTestConfigFlag(t *testing.T) {
	conf := writeConf(t, "port: 4333\ngateway { name: x }\nauthorization { token: s3cret }\n")
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"serve", "-c", conf, "-t"}, &out, &errOut); code != 0 {
		t.Fatalf("code %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), conf+" test is successful") || !strings.Contains(out.String(), `"gateway" is not supported`) ||
		strings.Contains(out.String(), "s3cret") {
		t.Fatalf("output:\n%s", out.String())
	}
	bad := writeConf(t, "port: 4333\nmax_connections: -1\n")
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"serve", "-c", bad, "-t"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), bad+":2:") {
		t.Fatalf("bad config: code %d, %q", code, errOut.String())
	}
}
