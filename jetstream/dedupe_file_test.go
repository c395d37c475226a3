package jetstream

import (
	"bytes"
	"encoding/json"
	"github.com/jetwal/jetwal/jetstream/internal/dedupe"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestDedupeWindowFile: a clean stop saves the duplicate window in
// dedupe.dat, so a restart detects duplicates without reading the stored
// messages; a damaged file is reported and the window read from the
// messages instead, with the same result.
func TestDedupeWindowFile(t *testing.T) {
	var logs bytes.Buffer
	ts := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.D", `{"name":"D","subjects":["d.>"]}`)
	pub := func(nc *nats.Conn, id string) api.PubAck {
		t.Helper()
		m := nats.NewMsg("d.x")
		m.Header.Set("Nats-Msg-Id", id)
		m.Data = []byte(id)
		r, err := nc.RequestMsg(m, 5e9)
		if err != nil {
			t.Fatal(err)
		}
		var ack api.PubAckResponse
		if err := json.Unmarshal(r.Data, &ack); err != nil || ack.Error != nil || ack.PubAck == nil {
			t.Fatalf("publish %s: %s", id, r.Data)
		}
		return *ack.PubAck
	}
	for _, id := range []string{"a", "b", "c"} {
		pub(nc, id)
	}
	ts = ts.restart()
	file := filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "D", dedupeFile)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no %s after a clean stop: %v", dedupeFile, err)
	}
	nc = ts.connect()
	if ack := pub(nc, "b"); !ack.Duplicate || ack.Sequence != 2 {
		t.Fatalf("after restart, republishing b: %+v, want a duplicate of sequence 2", ack)
	}
	if ack := pub(nc, "d"); ack.Duplicate || ack.Sequence != 4 {
		t.Fatalf("new id d: %+v, want sequence 4", ack)
	}
	// Damage the file: the window comes from the messages.
	ts.stop()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(file, b, 0o640); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, ts.cfg)
	nc = ts.connect()
	for id, seq := range map[string]uint64{"a": 1, "d": 4} {
		if ack := pub(nc, id); !ack.Duplicate || ack.Sequence != seq {
			t.Fatalf("after a damaged %s, republishing %s: %+v, want a duplicate of %d", dedupeFile, id, ack, seq)
		}
	}
	if !strings.Contains(logs.String(), dedupeFile) {
		t.Fatalf("damaged %s not reported:\n%s", dedupeFile, logs.String())
	}
}

// TestDedupeWindowSavedWhileRunning: the sweep saves the window of a
// growing stream, covering the stored messages, so the file a crash leaves
// is recent.
func TestDedupeWindowSavedWhileRunning(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.D", `{"name":"D","subjects":["d.>"]}`)
	for _, id := range []string{"a", "b"} {
		m := nats.NewMsg("d.x")
		m.Header.Set("Nats-Msg-Id", id)
		if _, err := nc.RequestMsg(m, 5e9); err != nil {
			t.Fatal(err)
		}
	}
	s := ts.js.lookup("D")
	s.saveDedupeIfDue(time.Now().Add(time.Minute))
	b, err := os.ReadFile(filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "D", dedupeFile))
	if err != nil {
		t.Fatalf("window not saved while running: %v", err)
	}
	d := dedupe.New(int64(time.Hour))
	covered, err := decodeDedupe(b, d)
	if err != nil || covered != 2 || d.Lookup("a") == nil || d.Lookup("b") == nil {
		t.Fatalf("saved window covers %d (%v), ids a=%v b=%v; want 2 with both", covered, err, d.Lookup("a") != nil, d.Lookup("b") != nil)
	}
	// Nothing new: no rewrite.
	before, _ := os.Stat(filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "D", dedupeFile))
	s.saveDedupeIfDue(time.Now().Add(2 * time.Minute))
	after, _ := os.Stat(filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "D", dedupeFile))
	if !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("an unchanged window was written again")
	}
	// That look counts as a save for the cadence: an idle stream is
	// looked at once a period, not at every sweep. A message stored now
	// waits for the next period.
	t0 := time.Now().Add(2 * time.Minute)
	m := nats.NewMsg("d.x")
	m.Header.Set("Nats-Msg-Id", "c")
	if _, err := nc.RequestMsg(m, 5e9); err != nil {
		t.Fatal(err)
	}
	saved := func() uint64 {
		b, err := os.ReadFile(filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "D", dedupeFile))
		if err != nil {
			t.Fatal(err)
		}
		covered, err := decodeDedupe(b, dedupe.New(int64(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		return covered
	}
	s.saveDedupeIfDue(t0.Add(dedupeSaveEvery / 2))
	if c := saved(); c != 2 {
		t.Fatalf("saved again half a period after looking: covers %d, want still 2", c)
	}
	s.saveDedupeIfDue(t0.Add(dedupeSaveEvery))
	if c := saved(); c != 3 {
		t.Fatalf("a period after looking: covers %d, want 3", c)
	}
}

// TestIdleCloseKeepsSavedWindow: a stop after the sweep saved the window,
// with nothing published since, leaves dedupe.dat as the sweep wrote it
// (closing an idle stream writes and fsyncs nothing for it), and the
// restart still finds the duplicate; a stop after a new publish rewrites
// it.
func TestIdleCloseKeepsSavedWindow(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.D", `{"name":"D","subjects":["d.>"]}`)
	pub := func(nc *nats.Conn, id string) bool {
		t.Helper()
		m := nats.NewMsg("d.x")
		m.Header.Set("Nats-Msg-Id", id)
		r, err := nc.RequestMsg(m, 5e9)
		if err != nil {
			t.Fatal(err)
		}
		var ack api.PubAckResponse
		if err := json.Unmarshal(r.Data, &ack); err != nil || ack.PubAck == nil {
			t.Fatalf("publish %s: %s", id, r.Data)
		}
		return ack.Duplicate
	}
	pub(nc, "a")
	ts.js.lookup("D").saveDedupeIfDue(time.Now().Add(time.Minute))
	file := filepath.Join(streamsDir(ts.cfg.StoreDir, GlobalAccount), "D", dedupeFile)
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a rewrite would show in the mtime
	ts = ts.restart()
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("closing an idle stream rewrote %s", dedupeFile)
	}
	nc = ts.connect()
	if !pub(nc, "a") {
		t.Fatal("after the restart, a is not a duplicate")
	}
	if pub(nc, "b") {
		t.Fatal("b, new, reported as a duplicate")
	}
	ts = ts.restart()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	d := dedupe.New(int64(time.Hour))
	if covered, err := decodeDedupe(b, d); err != nil || covered != 2 || d.Lookup("b") == nil {
		t.Fatalf("after a stop following a publish the window covers %d (%v), b saved: %v", covered, err, d.Lookup("b") != nil)
	}
}
