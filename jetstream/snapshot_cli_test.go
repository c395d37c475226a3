package jetstream

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCLIBackupRestore drives the pinned nats CLI: "nats stream backup"
// from one server, "nats stream restore" into another, and the restored
// stream and consumer as the first had them, also after a restart. A
// second restore of the same backup is refused (the CLI looks first).
func TestCLIBackupRestore(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	before := streamInfoRaw(t, nc, "SRC")
	dir := filepath.Join(t.TempDir(), "backup")

	ca := newCLI(t, a)
	ca.ok(args("stream", "backup", "SRC", dir, "--consumers", "--no-progress"))
	// The data file's name depends on the server version the CLI sees.
	var data int
	for _, f := range []string{"backup.json", "stream.arc.s2", "stream.tar.s2"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && fi.Size() > 0 {
			data++
		}
	}
	if data != 2 {
		t.Fatalf("backup directory holds %d of backup.json and a data file", data)
	}

	b := startServer(t, fastSync())
	cb := newCLI(t, b)
	cb.ok(args("stream", "restore", dir, "--no-progress"), "SRC")
	check := func(ts *testServer) {
		t.Helper()
		nb := ts.connect()
		got := streamInfoRaw(t, nb, "SRC")
		if got.Error != nil || got.State.Msgs != before.State.Msgs || got.State.FirstSeq != before.State.FirstSeq ||
			got.State.LastSeq != before.State.LastSeq || got.State.NumDeleted != before.State.NumDeleted {
			t.Fatalf("restored state %+v, want %+v", got.State, before.State)
		}
		ci := consumerInfoRaw(t, nb, "SRC", "D")
		if ci.Error != nil || ci.AckFloor.Stream != 17 || ci.NumAckPending != 5 {
			t.Fatalf("restored consumer: %+v", ci)
		}
	}
	check(b)
	cb.fails(args("stream", "restore", dir, "--no-progress"), "already exist")
	check(b.restart())
}
