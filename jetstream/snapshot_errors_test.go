package jetstream

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// streamDirEntries lists the streams directory: a failed restore must
// leave nothing there, hidden or not.
func streamDirEntries(t *testing.T, ts *testServer) []string {
	t.Helper()
	ents, err := os.ReadDir(streamsDir(ts.cfg.StoreDir, ts.js.cfg.Account))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestRestoreBadArchive: garbage, a truncated archive and an archive of
// another stream are refused with a clear error, and leave no stream and no
// files behind; the name can be restored afterwards.
func TestRestoreBadArchive(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	resp, archive, _ := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{})
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}

	b := startServer(t, fastSync())
	nb := b.connect()
	other := *resp.Config
	other.Name, other.Subjects = "OTHER", []string{"other.>"}
	cases := []struct {
		name string
		cfg  api.StreamConfig
		data []byte
		want string
	}{
		{"garbage", *resp.Config, bytes.Repeat([]byte("not an archive "), 500), "malformed snapshot archive"},
		{"truncated", *resp.Config, archive[:len(archive)/2], "malformed snapshot archive"},
		{"cut short by one byte", *resp.Config, archive[:len(archive)-1], "malformed snapshot archive"},
		{"another stream", other, archive, `holds stream "SRC"`},
	}
	for _, tc := range cases {
		out := restoreRaw(t, nb, tc.cfg, tc.data, 1000)
		if out.Error == nil || out.Error.ErrCode != api.ErrStreamRestore || !strings.Contains(out.Error.Description, tc.want) {
			t.Fatalf("%s: restore error %+v, want %d with %q", tc.name, out.Error, api.ErrStreamRestore, tc.want)
		}
		if r := streamInfoRaw(t, nb, tc.cfg.Name); r.Error == nil || r.Error.ErrCode != api.ErrStreamNotFound {
			t.Fatalf("%s: stream exists after a failed restore: %+v", tc.name, r.Error)
		}
		eventually(t, "no leftover files", func() bool { return len(streamDirEntries(t, b)) == 0 })
	}
	// An empty archive: the end message comes first.
	out := restoreRaw(t, nb, *resp.Config, nil, 1000)
	if out.Error == nil || !strings.Contains(out.Error.Description, "malformed snapshot archive") {
		t.Fatalf("empty archive: %+v", out.Error)
	}

	if out := restoreRaw(t, nb, *resp.Config, archive, 1<<16); out.Error != nil {
		t.Fatalf("restore after failed ones: %+v", out.Error)
	}
}

// TestRestoreRefusals: a name in use (nats-server's 10130), a name that
// differs from the subject, overlapping subjects; snapshot errors: unknown
// stream, empty request, invalid deliver subject.
func TestRestoreRefusals(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	resp, archive, _ := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{})
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	out := restoreRaw(t, nc, *resp.Config, archive, 1<<16)
	if out.Error == nil || out.Error.ErrCode != api.ErrStreamNameExistRestoreFailed || out.Error.Code != 400 {
		t.Fatalf("restore over an existing stream: %+v", out.Error)
	}
	if out.Type != api.TypeStreamRestore {
		t.Fatalf("refusal of type %q", out.Type)
	}

	body, _ := json.Marshal(api.StreamRestoreRequest{Config: api.StreamConfig{Name: "X"}})
	var rr api.StreamRestoreResponse
	requestJSON(t, nc, api.Prefix+"STREAM.RESTORE.Y", string(body), &rr)
	if rr.Error == nil || rr.Error.ErrCode != api.ErrStreamNameMismatch {
		t.Fatalf("name mismatch: %+v", rr.Error)
	}
	overlap := *resp.Config
	overlap.Name = "COPY"
	if out := restoreRaw(t, nc, overlap, archive, 1<<16); out.Error == nil || out.Error.ErrCode != api.ErrStreamSubjectOverlap {
		t.Fatalf("overlapping subjects: %+v", out.Error)
	}

	var sr api.StreamSnapshotResponse
	requestJSON(t, nc, api.Prefix+"STREAM.SNAPSHOT.NOPE", `{"deliver_subject":"x.y"}`, &sr)
	if sr.Error == nil || sr.Error.ErrCode != api.ErrStreamNotFound || sr.Type != api.TypeStreamSnapshot {
		t.Fatalf("snapshot of unknown stream: %+v", sr)
	}
	requestJSON(t, nc, api.Prefix+"STREAM.SNAPSHOT.SRC", ``, &sr)
	if sr.Error == nil || sr.Error.ErrCode != api.ErrBadRequest {
		t.Fatalf("empty snapshot request: %+v", sr.Error)
	}
	for _, ds := range []string{"", "a.*", "a.>", "a..b"} {
		requestJSON(t, nc, api.Prefix+"STREAM.SNAPSHOT.SRC", `{"deliver_subject":"`+ds+`"}`, &sr)
		if sr.Error == nil || sr.Error.ErrCode != api.ErrSnapshotDeliverSubjectInvalid {
			t.Fatalf("deliver subject %q: %+v", ds, sr.Error)
		}
	}
}

// TestSnapshotChunkSizes: chunk_size is clamped to 1KiB..1MiB, the window
// holds at least one chunk; chunks other than the last have exactly the
// chunk size.
func TestSnapshotChunkSizes(t *testing.T) {
	for _, tc := range []struct{ chunk, window, size, inflight int }{
		{0, 0, 128 << 10, 64},
		{10, 10, 1024, 1},
		{1 << 30, 0, 1 << 20, 8},
		{4096, 1 << 30, 4096, 8192},
		{64 << 10, 1000, 64 << 10, 1},
		{-1, -1, 1024, 1}, // nats-server clamps negative sizes, it does not default them
	} {
		size, inflight := snapChunkSizes(tc.chunk, tc.window)
		if size != tc.size || inflight != tc.inflight {
			t.Fatalf("chunk %d window %d: size %d inflight %d, want %d %d", tc.chunk, tc.window, size, inflight, tc.size, tc.inflight)
		}
	}

	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	for _, req := range []struct{ chunk, want int }{{10, 1024}, {2048, 2048}} {
		resp, archive, sizes := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{ChunkSize: req.chunk, NoConsumers: true})
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		if len(sizes) < 2 {
			t.Fatalf("chunk size %d: %d chunks of %d bytes", req.chunk, len(sizes), len(archive))
		}
		for i, n := range sizes {
			if n > req.want || (i < len(sizes)-1 && n != req.want) {
				t.Fatalf("chunk size %d: chunk %d of %d bytes, want %d", req.chunk, i, n, req.want)
			}
		}
	}
}

// TestSnapshotNoConsumers: no_consumers leaves the consumers out (with
// jsck, the stored messages checked first).
func TestSnapshotNoConsumers(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	resp, archive, _ := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{NoConsumers: true, CheckMsgs: true})
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	b := startServer(t, fastSync())
	nb := b.connect()
	if out := restoreRaw(t, nb, *resp.Config, archive, 1<<16); out.Error != nil || out.State.Consumers != 0 {
		t.Fatalf("restore: %+v, consumers %d", out.Error, out.State.Consumers)
	}
	if ci := consumerInfoRaw(t, nb, "SRC", "D"); ci.Error == nil {
		t.Fatal("consumer restored although left out")
	}
}
