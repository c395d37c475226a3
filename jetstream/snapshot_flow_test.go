package jetstream

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestSnapshotNoFlowAck: a receiver that never acks gets one window of
// chunks, then the end message with status 408 No Flow Response.
func TestSnapshotNoFlowAck(t *testing.T) {
	cfg := fastSync()
	cfg.waits.snapAck = 200 * time.Millisecond
	a := startServer(t, cfg)
	nc := snapshotSource(t, a)

	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	var resp api.StreamSnapshotResponse
	requestJSON(t, nc, api.Prefix+"STREAM.SNAPSHOT.SRC", `{"deliver_subject":"`+inbox+`","chunk_size":1024,"window_size":2048}`, &resp)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	chunks := 0
	for {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("after %d chunks: %v", chunks, err)
		}
		if len(m.Data) == 0 {
			if st := m.Header.Get("Status"); st != "408" || m.Header.Get("Description") != "No Flow Response" {
				t.Fatalf("end status %q %q", st, m.Header.Get("Description"))
			}
			break
		}
		if m.Reply == "" || !strings.HasPrefix(m.Reply, api.SnapshotAckPrefix+"SRC.") {
			t.Fatalf("chunk reply %q", m.Reply)
		}
		chunks++
	}
	if chunks != 2 {
		t.Fatalf("%d chunks sent without acks, want the window's 2", chunks)
	}
}

// TestRestoreStalled: a restore whose client goes quiet is abandoned and
// leaves nothing behind.
func TestRestoreStalled(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	resp, archive, _ := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{})
	cfg := fastSync()
	cfg.waits.restoreIdle = 200 * time.Millisecond
	b := startServer(t, cfg)
	nb := b.connect()
	body, _ := json.Marshal(api.StreamRestoreRequest{Config: *resp.Config})
	var rr api.StreamRestoreResponse
	requestJSON(t, nb, api.Prefix+"STREAM.RESTORE.SRC", string(body), &rr)
	if rr.Error != nil || !strings.HasPrefix(rr.DeliverSubject, api.SnapshotRestorePrefix+"SRC.") {
		t.Fatalf("restore response %+v", rr)
	}
	// On a slow machine the restore may already be abandoned when this
	// chunk arrives (no responders); either way nothing may be left.
	if m, err := nb.Request(rr.DeliverSubject, archive[:len(archive)/2], 5*time.Second); err == nil && len(m.Data) != 0 {
		t.Fatalf("chunk ack %q", m.Data)
	}
	eventually(t, "the stalled restore to go", func() bool {
		return !b.srv.HasInterest(rr.DeliverSubject) && len(streamDirEntries(t, b)) == 0
	})
	if r := streamInfoRaw(t, nb, "SRC"); r.Error == nil {
		t.Fatal("a stalled restore created the stream")
	}
}

// TestSnapshotPurgedAndMemory: an empty (purged) stream keeps its
// sequence; a memory stream's snapshot restores as a file stream, and as
// a memory stream is refused.
func TestSnapshotPurgedAndMemory(t *testing.T) {
	a := startServer(t, fastSync())
	nc := a.connect()
	for _, st := range []string{"file", "memory"} {
		name := "P" + strings.ToUpper(st)
		var cr api.StreamCreateResponse
		requestJSON(t, nc, api.Prefix+"STREAM.CREATE."+name, `{"name":"`+name+`","subjects":["`+st+`.>"],"storage":"`+st+`"}`, &cr)
		if cr.Error != nil {
			t.Fatal(cr.Error)
		}
		for i := 0; i < 30; i++ {
			request(t, nc, st+".x", "m")
		}
	}
	var pr api.StreamPurgeResponse
	requestJSON(t, nc, api.Prefix+"STREAM.PURGE.PFILE", "", &pr)
	if pr.Error != nil || pr.Purged != 30 {
		t.Fatalf("purge: %+v", pr)
	}

	b := startServer(t, fastSync())
	nb := b.connect()
	resp, archive, _ := snapshotRaw(t, nc, "PFILE", api.StreamSnapshotRequest{})
	out := restoreRaw(t, nb, *resp.Config, archive, 1<<16)
	if out.Error != nil || out.State.Msgs != 0 || out.State.FirstSeq != 31 || out.State.LastSeq != 30 {
		t.Fatalf("purged stream restored as %+v (%+v)", out.State, out.Error)
	}
	request(t, nb, "file.y", "after")
	if got := streamInfoRaw(t, nb, "PFILE").State.LastSeq; got != 31 {
		t.Fatalf("next publish got seq %d, want 31", got)
	}

	resp, archive, _ = snapshotRaw(t, nc, "PMEMORY", api.StreamSnapshotRequest{})
	if resp.Error != nil || resp.State.Msgs != 30 {
		t.Fatalf("memory snapshot: %+v", resp)
	}
	if out := restoreRaw(t, nb, *resp.Config, archive, 1<<16); out.Error == nil || !strings.Contains(out.Error.Description, "file streams only") {
		t.Fatalf("memory restore: %+v", out.Error)
	}
	cfg := *resp.Config
	cfg.Storage = api.FileStorage
	if out := restoreRaw(t, nb, cfg, archive, 1<<16); out.Error != nil || out.State.Msgs != 30 || out.Config.Storage != api.FileStorage {
		t.Fatalf("memory snapshot restored as file: %+v", out.Error)
	}
}

// TestSnapshotRestoreAdvisories: the four advisories, on nats-server's
// subjects and schema types.
func TestSnapshotRestoreAdvisories(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	sub, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.STREAM.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	resp, archive, _ := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{})
	requestJSON(t, nc, api.Prefix+"STREAM.DELETE.SRC", "", &api.StreamDeleteResponse{})
	if out := restoreRaw(t, nc, *resp.Config, archive, 1000); out.Error != nil {
		t.Fatal(out.Error)
	}
	want := map[string]string{
		api.SubjAdvisorySnapshotCreate + "SRC":   api.TypeAdvisorySnapshotCreate,
		api.SubjAdvisorySnapshotComplete + "SRC": api.TypeAdvisorySnapshotComplete,
		api.SubjAdvisoryRestoreCreate + "SRC":    api.TypeAdvisoryRestoreCreate,
		api.SubjAdvisoryRestoreComplete + "SRC":  api.TypeAdvisoryRestoreComplete,
	}
	for len(want) > 0 {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("advisories still missing: %v", want)
		}
		typ, ok := want[m.Subject]
		if !ok {
			continue
		}
		var ev struct {
			Type   string `json:"type"`
			Stream string `json:"stream"`
			Bytes  int64  `json:"bytes"`
		}
		if err := json.Unmarshal(m.Data, &ev); err != nil || ev.Type != typ || ev.Stream != "SRC" {
			t.Fatalf("%s: %s", m.Subject, m.Data)
		}
		if typ == api.TypeAdvisoryRestoreComplete && ev.Bytes != int64(len(archive)) {
			t.Fatalf("restore complete with %d bytes, archive of %d", ev.Bytes, len(archive))
		}
		delete(want, m.Subject)
	}
}

// TestRestoreInterruptedByShutdown: a restore cut short by a shutdown
// leaves no stream after the restart, and no files.
func TestRestoreInterruptedByShutdown(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)
	resp, archive, _ := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{})
	b := startServer(t, fastSync())
	nb := b.connect()
	body, _ := json.Marshal(api.StreamRestoreRequest{Config: *resp.Config})
	var rr api.StreamRestoreResponse
	requestJSON(t, nb, api.Prefix+"STREAM.RESTORE.SRC", string(body), &rr)
	if rr.Error != nil {
		t.Fatal(rr.Error)
	}
	request(t, nb, rr.DeliverSubject, string(archive[:len(archive)/2]))
	b = b.restart()
	if r := streamInfoRaw(t, b.connect(), "SRC"); r.Error == nil {
		t.Fatal("an interrupted restore left a stream")
	}
	eventually(t, "no leftover files", func() bool { return len(streamDirEntries(t, b)) == 0 })
}
