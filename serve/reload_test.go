package serve

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/syncbuf"
)

// TestAccountsReload: a reload changes the users of existing accounts; one
// that changes the accounts themselves is refused (they are fixed at
// start).
func TestAccountsReload(t *testing.T) {
	conf := writeConf(t, "listen: 127.0.0.1:0\naccounts {\n A: { users: [{user: a, password: one}] }\n}\n")
	o, err := ParseCommandLine([]string{"-c", conf}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(o.Options)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	logs := &syncbuf.Buffer{}
	log := slog.New(NewLogHandler(logs, false, false))
	try := func(user, pass string) error {
		nc, err := nats.Connect(srv.ClientURL(), nats.UserInfo(user, pass), nats.NoReconnect())
		if err == nil {
			nc.Close()
		}
		return err
	}
	if err := try("a", "one"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("listen: 127.0.0.1:0\naccounts {\n A: { users: [{user: a, password: two}] }\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Reload(srv, log)
	if try("a", "one") == nil || try("a", "two") != nil {
		t.Fatalf("the new password of A's user did not apply:\n%s", logs)
	}
	if err := os.WriteFile(conf, []byte("listen: 127.0.0.1:0\naccounts {\n A: { users: [{user: a, password: three}] }\n B: { users: [{user: b, password: b}] }\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Reload(srv, log)
	if !strings.Contains(logs.String(), "the accounts or the system account changed") || try("a", "two") != nil || try("b", "b") == nil {
		t.Fatalf("a reload adding an account was not refused:\n%s", logs)
	}
}
