package jetstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// snapshotRaw takes a snapshot of stream over raw requests, acking every
// chunk as the nats tools do. It returns the response and the archive.
func snapshotRaw(t *testing.T, nc *nats.Conn, stream string, req api.StreamSnapshotRequest) (api.StreamSnapshotResponse, []byte, []int) {
	t.Helper()
	if req.DeliverSubject == "" {
		req.DeliverSubject = nats.NewInbox()
	}
	var mu sync.Mutex
	var data bytes.Buffer
	var sizes []int
	done := make(chan string, 1)
	sub, err := nc.Subscribe(req.DeliverSubject, func(m *nats.Msg) {
		if len(m.Data) == 0 {
			done <- m.Header.Get("Status") + " " + m.Header.Get("Description")
			return
		}
		mu.Lock()
		data.Write(m.Data)
		sizes = append(sizes, len(m.Data))
		mu.Unlock()
		if m.Reply != "" {
			_ = m.Respond(nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	body, _ := json.Marshal(req)
	var resp api.StreamSnapshotResponse
	requestJSON(t, nc, api.Prefix+"STREAM.SNAPSHOT."+stream, string(body), &resp)
	if resp.Error != nil {
		return resp, nil, nil
	}
	select {
	case st := <-done:
		if !strings.HasPrefix(st, "204") {
			t.Fatalf("snapshot ended with status %q", st)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("snapshot did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	return resp, bytes.Clone(data.Bytes()), sizes
}

// restoreRaw restores stream from an archive sent in chunks of chunk bytes
// and returns the final reply.
func restoreRaw(t *testing.T, nc *nats.Conn, cfg api.StreamConfig, archive []byte, chunk int) api.StreamCreateResponse {
	t.Helper()
	body, _ := json.Marshal(api.StreamRestoreRequest{Config: cfg})
	var resp api.StreamRestoreResponse
	requestJSON(t, nc, api.Prefix+"STREAM.RESTORE."+cfg.Name, string(body), &resp)
	if resp.Error != nil {
		return api.StreamCreateResponse{Response: resp.Response}
	}
	for len(archive) > 0 {
		n := min(chunk, len(archive))
		m := request(t, nc, resp.DeliverSubject, string(archive[:n]))
		archive = archive[n:]
		if len(m.Data) > 0 { // an error: the restore is over
			var out api.StreamCreateResponse
			if err := json.Unmarshal(m.Data, &out); err != nil {
				t.Fatalf("chunk reply %q: %v", m.Data, err)
			}
			return out
		}
	}
	var out api.StreamCreateResponse
	requestJSON(t, nc, resp.DeliverSubject, "", &out)
	if out.Type != api.TypeStreamCreate {
		t.Fatalf("final reply of type %q", out.Type)
	}
	return out
}

// snapMsgs reads every message of a stream up to last with STREAM.MSG.GET.
func snapMsgs(t *testing.T, nc *nats.Conn, stream string, last uint64) map[uint64]api.StoredMsg {
	t.Helper()
	out := map[uint64]api.StoredMsg{}
	for seq := uint64(1); seq <= last; seq++ {
		var r api.MsgGetResponse
		requestJSON(t, nc, api.Prefix+"STREAM.MSG.GET."+stream, fmt.Sprintf(`{"seq":%d}`, seq), &r)
		if r.Error == nil && r.Message != nil {
			out[seq] = *r.Message
		}
	}
	return out
}

func streamInfoRaw(t *testing.T, nc *nats.Conn, stream string) api.StreamInfoResponse {
	t.Helper()
	var r api.StreamInfoResponse
	requestJSON(t, nc, api.Prefix+"STREAM.INFO."+stream, `{"deleted_details":true}`, &r)
	return r
}

func consumerInfoRaw(t *testing.T, nc *nats.Conn, stream, name string) api.ConsumerInfoResponse {
	t.Helper()
	var r api.ConsumerInfoResponse
	requestJSON(t, nc, api.Prefix+"CONSUMER.INFO."+stream+"."+name, "", &r)
	return r
}

// snapshotSource builds stream SRC: messages with headers, deleted ones
// at the start, in the middle and at the end, and a durable consumer with
// some acknowledged and some pending messages.
func snapshotSource(t *testing.T, ts *testServer) *nats.Conn {
	t.Helper()
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "SRC", Subjects: []string{"src.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 100; i++ {
		m := nats.NewMsg(fmt.Sprintf("src.%d", i%7))
		m.Header.Set("X-I", fmt.Sprint(i))
		m.Data = []byte(strings.Repeat(fmt.Sprint(i), i%13))
		if _, err := js.PublishMsg(ctxT(t), m); err != nil {
			t.Fatal(err)
		}
	}
	for _, seq := range []uint64{1, 2, 50, 51, 52, 77, 100} {
		if err := s.DeleteMsg(ctxT(t), seq); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "D", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(20, njs.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for m := range batch.Messages() {
		if i < 15 { // the rest stays pending
			if err := m.DoubleAck(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		i++
	}
	if i != 20 {
		t.Fatalf("fetched %d messages, want 20", i)
	}
	return nc
}

// TestSnapshotRestoreRoundTrip snapshots a stream while publishes go on and
// restores it into a fresh server: the same messages (subjects, headers,
// data, times) under the same sequences, the same holes, the consumer's
// positions, and all of it after a restart.
func TestSnapshotRestoreRoundTrip(t *testing.T) {
	a := startServer(t, fastSync())
	nc := snapshotSource(t, a)

	// Publishes go on during the snapshot.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pc := a.connect()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = pc.Request("src.live", []byte(fmt.Sprint(i)), 5*time.Second)
		}
	}()
	eventually(t, "live publishes", func() bool { return streamInfoRaw(t, nc, "SRC").State.LastSeq > 105 })
	resp, archive, _ := snapshotRaw(t, nc, "SRC", api.StreamSnapshotRequest{ChunkSize: 1024, WindowSize: 4096})
	close(stop)
	wg.Wait()
	if resp.Error != nil || resp.Config == nil || resp.State == nil {
		t.Fatalf("snapshot response: %+v", resp)
	}
	last := resp.State.LastSeq
	if last <= 105 {
		t.Fatalf("snapshot last seq %d, want the live publishes in it", last)
	}
	if after := streamInfoRaw(t, nc, "SRC").State.LastSeq; after < last {
		t.Fatalf("stream last seq %d below the snapshot's %d", after, last)
	}

	b := startServer(t, fastSync())
	nb := b.connect()
	out := restoreRaw(t, nb, *resp.Config, archive, 4000)
	if out.Error != nil || out.StreamInfo == nil {
		t.Fatalf("restore: %+v", out.Error)
	}
	if out.State.LastSeq != last || out.State.Msgs != resp.State.Msgs || out.State.FirstSeq != resp.State.FirstSeq {
		t.Fatalf("restored state %+v, snapshot state %+v", out.State, *resp.State)
	}

	check := func(nb *nats.Conn) {
		t.Helper()
		want, got := snapMsgs(t, nc, "SRC", last), snapMsgs(t, nb, "SRC", last+2)
		if len(want) != len(got) {
			t.Fatalf("restored %d messages, want %d", len(got), len(want))
		}
		for seq, w := range want {
			g, ok := got[seq]
			if !ok {
				t.Fatalf("seq %d missing after restore", seq)
			}
			if g.Subject != w.Subject || !bytes.Equal(g.Data, w.Data) || !bytes.Equal(g.Header, w.Header) || !g.Time.Equal(w.Time) {
				t.Fatalf("seq %d: restored %+v, want %+v", seq, g, w)
			}
		}
		bi := streamInfoRaw(t, nb, "SRC")
		if bi.State.FirstSeq != 3 || bi.State.LastSeq != last || bi.State.NumDeleted != resp.State.NumDeleted {
			t.Fatalf("restored state %+v, snapshot %+v", bi.State, *resp.State)
		}
		for _, seq := range []uint64{50, 51, 52, 77, 100} {
			found := false
			for _, d := range bi.State.Deleted {
				found = found || d == seq
			}
			if !found {
				t.Fatalf("seq %d not deleted after restore: %v", seq, bi.State.Deleted)
			}
		}
		ci := consumerInfoRaw(t, nb, "SRC", "D")
		if ci.Error != nil || ci.ConsumerInfo == nil {
			t.Fatalf("consumer after restore: %+v", ci.Error)
		}
		if ci.AckFloor.Stream != 17 || ci.Delivered.Stream != 22 || ci.NumAckPending != 5 {
			t.Fatalf("consumer after restore: ack floor %+v delivered %+v pending %d", ci.AckFloor, ci.Delivered, ci.NumAckPending)
		}
	}
	check(nb)

	// The restored stream and its consumer survive a restart.
	b = b.restart()
	check(b.connect())
}
