package serve

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/syncbuf"
	"github.com/jetwal/jetwal/server"
)

// TestServeInProcess runs serve with JetStream on, talks to it with nats.go
// and stops it through the context.
func TestServeInProcess(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	o, err := ParseCommandLine([]string{"-p", "0", "-a", "127.0.0.1", "-js", "-sd", store}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	log := slog.New(NewLogHandler(logs, false, false))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, log, nil, nil) }()

	var addr string
	deadline := time.Now().Add(10 * time.Second)
	for addr == "" {
		if time.Now().After(deadline) {
			t.Fatalf("server did not start:\n%s", logs)
		}
		if m := listenRE.FindStringSubmatch(logs.String()); m != nil && strings.Contains(logs.String(), "Server is ready") {
			addr = m[1]
		}
		time.Sleep(5 * time.Millisecond)
	}
	banner := logs.String()
	for _, want := range []string{"Starting jetwal", "Version:  " + testVersion, "Max Payload:     1.0 MiB", "Store Directory: \"" + store + "\"", "Sync:            always", "[INF] Server is ready"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if fi, err := os.Stat(store); err != nil || !fi.IsDir() {
		t.Errorf("store directory not created: %v", err)
	}

	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	info := nc.ConnectedServerVersion()
	if info != server.DefaultVersion {
		t.Errorf("server version %q", info)
	}
	sub, _ := nc.SubscribeSync("x")
	nc.Publish("x", []byte("y"))
	if m, err := sub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "y" {
		t.Fatalf("round trip: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not return after cancel")
	}
	if !strings.Contains(logs.String(), "Server Exiting") {
		t.Fatalf("no exit line:\n%s", logs)
	}
}

var listenRE = regexp.MustCompile(`Listening for client connections on (\S+)`)
