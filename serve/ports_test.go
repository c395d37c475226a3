package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestHarnessStart starts jetwal the way client test harnesses start
// nats-server (nats.js, nats.py, nats.rs, nats.net, nats.java): a generated
// configuration with any free port (-1) for clients, monitoring and leaf
// nodes, server tags, a JetStream store, and ports_file_dir. The ports
// file appears under nats-server's name pattern (<program>_<pid>.ports)
// with the real ports (the websocket listener's under "websocket"), a
// client connects with them (a WebSocket one too), the monitoring URL
// answers, and shutdown removes the file.
func TestHarnessStart(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, fmt.Sprintf(`
host: 127.0.0.1
port: -1
http: "127.0.0.1:-1"
leafnodes { listen: "127.0.0.1:-1" }
websocket { listen: "127.0.0.1:-1", no_tls: true, compression: true }
server_tags: ["id:harness"]
ports_file_dir: %q
jetstream { store_dir: %q, max_file_store: 1GB, max_mem_store: 1GB }
`, dir, filepath.Join(dir, "store")))
	o, err := ParseCommandLine([]string{"-c", conf}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	portsFile := filepath.Join(dir, fmt.Sprintf("%s_%d.ports", filepath.Base(os.Args[0]), os.Getpid()))
	if o.PortsFile != portsFile {
		t.Fatalf("ports file %q, want %q", o.PortsFile, portsFile)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, slog.New(slog.DiscardHandler), nil, nil) }()
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			<-done
		}
	}()
	var p struct{ Nats, Monitoring, Websocket []string }
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(portsFile)
		if err == nil && json.Unmarshal(b, &p) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ports file %s: %v", portsFile, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(p.Nats) != 1 || len(p.Monitoring) != 1 || len(p.Websocket) != 1 {
		t.Fatalf("ports %+v", p)
	}
	wc, err := nats.Connect(p.Websocket[0])
	if err != nil {
		t.Fatalf("websocket client through the ports file's URL: %v", err)
	}
	defer wc.Close()
	if _, err := wc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Fatalf("JetStream over websocket: %v", err)
	}
	nc, err := nats.Connect(p.Nats[0])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Fatalf("JetStream through the ports file's URL: %v", err)
	}
	resp, err := http.Get(p.Monitoring[0] + "/varz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/varz: %s", resp.Status)
	}
	cancel()
	stopped = true
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(portsFile); !os.IsNotExist(err) {
		t.Fatalf("ports file left after shutdown: %v", err)
	}
}
