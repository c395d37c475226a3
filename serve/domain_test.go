package serve

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// TestDomainFromConfig starts a server the way nats.js's "jetstream -
// account domain" and "puback domain" tests do: a configuration file with
// a JetStream domain and an account with JetStream limits and a user. The
// user's JetStream is reached through $JS.<domain>.API, account info and
// PubAcks name the domain, and the account's limits are its own.
func TestDomainFromConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "domain.conf")
	if err := os.WriteFile(conf, []byte(`
port: -1
jetstream { domain: A, store_dir: "`+filepath.Join(dir, "js")+`" }
accounts {
  A {
    users: [ { user: a, password: a } ]
    jetstream: { max_memory: 10000, max_file: 10000 }
  }
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := FromConfig(conf, Flags{Host: "127.0.0.1", JetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo("a", "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := njs.NewWithDomain(nc, "A")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ai, err := js.AccountInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ai.Domain != "A" || ai.Limits.MaxMemory != 10000 || ai.Limits.MaxStore != 10000 {
		t.Fatalf("account info: domain %q limits %+v", ai.Domain, ai.Limits)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "S", Subjects: []string{"s.>"}, MaxBytes: 1000}); err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, "s.x", nil)
	if err != nil || ack.Domain != "A" || ack.Stream != "S" || ack.Sequence != 1 {
		t.Fatalf("puback %+v %v", ack, err)
	}
	// The account's file limit is its own: a stream asking for more is refused.
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "BIG", Subjects: []string{"big"}, MaxBytes: 20000}); err == nil {
		t.Fatal("a stream above the account's max_file was created")
	}
}
