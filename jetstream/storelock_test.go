package jetstream

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// TestStoreLockedByOneProcess: a second JetStream on the same store
// directory is refused, naming the directory and the holder, and loads
// nothing; once the first closes, the store opens again.
func TestStoreLockedByOneProcess(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)

	srv2, err := server.New(server.Options{Host: "127.0.0.1", Port: 0, JetStream: true, APILevel: api.Level})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(srv2, Config{StoreDir: ts.cfg.StoreDir})
	if !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("second JetStream on the store: %v, want ErrStoreLocked", err)
	}
	for _, want := range []string{ts.cfg.StoreDir, "process " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %q", err, want)
		}
	}
	ts.stop()
	js2, err := New(srv2, Config{StoreDir: ts.cfg.StoreDir})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	defer js2.Close()
	if js2.lookup("S") == nil {
		t.Fatal("stream S not loaded by the new owner")
	}
}

// TestStreamThatFailsToLoadIsReported: a stream whose files cannot be read
// (an I/O error, not damage: a segment that is a directory) is not loaded,
// and Stats reports it with its path, so /healthz is not healthy.
func TestStreamThatFailsToLoadIsReported(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)
	request(t, nc, "$JS.API.STREAM.CREATE.T", `{"name":"T","subjects":["t.>"]}`)
	ts.stop()
	msgs := filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "S", "msgs")
	if err := os.Mkdir(filepath.Join(msgs, "00000000000000000009.seg"), 0o750); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, ts.cfg)
	if ts.js.lookup("S") != nil || ts.js.lookup("T") == nil {
		t.Fatal("want S refused and T loaded")
	}
	errs := ts.js.Stats().LoadErrors
	if len(errs) != 1 || !strings.Contains(errs[0], msgs) {
		t.Fatalf("load errors %q, want one naming %s", errs, msgs)
	}
}

// TestAccountDirectory: the account is a parameter of the store layout:
// an account's streams live under jetstream/<account>/streams, and a name
// that could leave the store directory is refused.
func TestAccountDirectory(t *testing.T) {
	ts := startServer(t, Config{Account: "ORDERS_TEAM"})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)
	if _, err := os.Stat(filepath.Join(streamsDir(ts.cfg.StoreDir, "ORDERS_TEAM"), "S", "meta.inf")); err != nil {
		t.Fatalf("stream not under the account's directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "S")); err == nil {
		t.Fatal("stream also under $G")
	}
	for _, bad := range []string{"../x", "a/b", "..", "a\\b"} {
		if err := (Config{Account: bad}).Validate(); err == nil {
			t.Fatalf("account %q accepted", bad)
		}
	}
}
