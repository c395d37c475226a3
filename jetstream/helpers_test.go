package jetstream

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// testServer is an in-process server with JetStream on a random port.
type testServer struct {
	t   *testing.T
	srv *server.Server
	js  *JetStream
	cfg Config
}

// startServer starts a server and JetStream over cfg (StoreDir defaults to
// a fresh t.TempDir(), Sync to SyncNever to keep tests fast unless set).
func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	return startServerWith(t, cfg, server.Options{})
}

// startServerWith is startServer with server options of the test's own
// (the listener, JetStream and API level are always set).
func startServerWith(t *testing.T, cfg Config, o server.Options) *testServer {
	t.Helper()
	if cfg.StoreDir == "" {
		cfg.StoreDir = t.TempDir()
	}
	o.Host, o.Port, o.JetStream, o.APILevel = "127.0.0.1", 0, true, api.Level
	srv, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	js, err := New(srv, cfg)
	if err != nil {
		srv.Shutdown(context.Background())
		t.Fatal(err)
	}
	ts := &testServer{t: t, srv: srv, js: js, cfg: cfg}
	t.Cleanup(ts.stop)
	return ts
}

// stop shuts the server down (JetStream closes with it).
func (ts *testServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		ts.t.Errorf("shutdown: %v", err)
	}
}

// restart stops the server and starts a new one over the same store.
func (ts *testServer) restart() *testServer {
	ts.t.Helper()
	ts.stop()
	return startServer(ts.t, ts.cfg)
}

func (ts *testServer) connect() *nats.Conn {
	ts.t.Helper()
	nc, err := nats.Connect(ts.srv.ClientURL(), nats.Timeout(5*time.Second))
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(nc.Close)
	return nc
}

// request sends body to subj and returns the raw reply.
func request(t *testing.T, nc *nats.Conn, subj string, body string) *nats.Msg {
	t.Helper()
	m, err := nc.Request(subj, []byte(body), 5*time.Second)
	if err != nil {
		t.Fatalf("request %s: %v", subj, err)
	}
	return m
}

// requestJSON sends body to subj and decodes the reply into v.
func requestJSON(t *testing.T, nc *nats.Conn, subj, body string, v any) []byte {
	t.Helper()
	m := request(t, nc, subj, body)
	if err := json.Unmarshal(m.Data, v); err != nil {
		t.Fatalf("%s: decode %s: %v", subj, m.Data, err)
	}
	return m.Data
}

// storages is the matrix every stream test runs over: the wal file store
// and the memory store behind the same API.
var storages = []struct {
	name string
	typ  api.StorageType
}{
	{"file", api.FileStorage},
	{"memory", api.MemoryStorage},
}

// fastSync is the config most tests use: real files, no fsync waits.
func fastSync() Config { return Config{Sync: wal.SyncNever} }

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
