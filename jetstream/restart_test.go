package jetstream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// TestRestartKeepsStreams: config, creation time, messages and the
// duplicate window survive a restart; memory streams do not.
func TestRestartKeepsStreams(t *testing.T) {
	ts := startServer(t, Config{Sync: wal.SyncAlways})
	js, _ := njs.New(ts.connect())
	ctx := ctxT(t)
	s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "KEEP", Subjects: []string{"keep.*"}, MaxMsgsPerSubject: 3,
		Description: "kept", AllowDirect: true, FirstSeq: 100})
	if err != nil {
		t.Fatal(err)
	}
	created := s.CachedInfo().Created
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "GONE", Storage: njs.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		ack, err := js.Publish(ctx, "keep.a", []byte("v"), njs.WithMsgID("id-"+string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		if ack.Sequence != uint64(100+i) {
			t.Fatalf("first_seq not applied: %+v", ack)
		}
	}

	// The on-disk layout the walkthrough shows.
	dir := filepath.Join(ts.cfg.StoreDir, "jetstream", "$G", "streams", "KEEP")
	for _, p := range []string{"meta.inf", "meta.sum", "msgs", "obs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("layout: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(ts.cfg.StoreDir, "jetstream", "$G", "streams", "GONE")); !os.IsNotExist(err) {
		t.Fatalf("memory stream on disk: %v", err)
	}

	ts = ts.restart()
	if errs := ts.js.LoadErrors(); len(errs) != 0 {
		t.Fatalf("load errors %v", errs)
	}
	js, _ = njs.New(ts.connect())
	s, err = js.Stream(ctx, "KEEP")
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	if !info.Created.Equal(created) || info.Config.Description != "kept" || info.Config.MaxMsgsPerSubject != 3 ||
		info.State.Msgs != 3 || info.State.FirstSeq != 102 || info.State.LastSeq != 104 {
		t.Fatalf("after restart: created %v (was %v) %+v %+v", info.Created, created, info.Config, info.State)
	}
	// Dedupe still knows the ids of stored messages inside the window. (Like
	// nats-server, it is rebuilt from the stored messages, so ids of messages
	// a limit removed before the restart are forgotten.)
	for _, id := range []string{"id-c", "id-e"} {
		ack, err := js.Publish(ctx, "keep.a", []byte("again"), njs.WithMsgID(id))
		if err != nil || !ack.Duplicate {
			t.Fatalf("%s after restart: %v %+v", id, err, ack)
		}
	}
	if ack, err := js.Publish(ctx, "keep.a", nil, njs.WithExpectLastMsgID("id-e")); err != nil || ack.Sequence != 105 {
		t.Fatalf("last msg id after restart: %v %+v", err, ack)
	}
	if _, err := js.Stream(ctx, "GONE"); !errors.Is(err, njs.ErrStreamNotFound) {
		t.Fatalf("memory stream after restart: %v", err)
	}
}

// TestDamagedMetaReported: a stream whose meta.inf is damaged is reported
// with its path at startup and not loaded; the other streams load.
func TestDamagedMetaReported(t *testing.T) {
	ts := startServer(t, fastSync())
	js, _ := njs.New(ts.connect())
	ctx := ctxT(t)
	for _, n := range []string{"GOOD", "BAD"} {
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: n}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, n, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	ts.stop()
	bad := filepath.Join(ts.cfg.StoreDir, "jetstream", "$G", "streams", "BAD", "meta.inf")
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x20
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, ts.cfg)
	errs := ts.js.LoadErrors()
	if len(errs) != 1 || !errors.Is(errs[0], ErrMetaCorrupt) || !strings.Contains(errs[0].Error(), bad) {
		t.Fatalf("load errors %v", errs)
	}
	if got := ts.js.StreamNames(); len(got) != 1 || got[0] != "GOOD" {
		t.Fatalf("loaded %v", got)
	}
	js, _ = njs.New(ts.connect())
	if s, err := js.Stream(ctx, "GOOD"); err != nil || s.CachedInfo().State.Msgs != 1 {
		t.Fatalf("good stream: %v", err)
	}
	// The damaged stream's directory is left alone, and its name cannot be
	// reused over it by accident.
	if _, err := os.Stat(bad); err != nil {
		t.Fatalf("damaged stream removed: %v", err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "BAD"}); apiCode(err) != 10049 {
		t.Fatalf("create over damaged stream: %v", err)
	}
}

// TestFailedSyncAnswersWithError: when the store cannot make a message
// durable, the publisher gets an error PubAck, not a success.
func TestFailedSyncAnswersWithError(t *testing.T) {
	efs := vfs.NewErrorFS(vfs.Default)
	ts := startServer(t, Config{Sync: wal.SyncAlways, FS: efs})
	js, _ := njs.New(ts.connect())
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "F"}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "F", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	efs.Inject(vfs.Fault{Op: vfs.OpSync, Path: filepath.Join("F", "msgs")})
	_, err := js.Publish(ctx, "F", []byte("lost"))
	if apiCode(err) != 10077 {
		t.Fatalf("publish with failing fsync: %v", err)
	}
}

// TestAPIErrors checks error codes of malformed or impossible requests.
func TestAPIErrors(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	create := func(name, body string) api.ApiError {
		var r api.Response
		requestJSON(t, nc, api.SubjStreamCreate+name, body, &r)
		if r.Error == nil {
			t.Fatalf("create %s %s succeeded", name, body)
		}
		return *r.Error
	}
	for _, c := range []struct {
		name, body string
		code       api.ErrCode
	}{
		{"A", `{"name":`, api.ErrInvalidJSON},
		{"A", ``, api.ErrInvalidJSON},
		{"A", `{"name":"B"}`, api.ErrStreamNameMismatch},
		{"A", `{"num_replicas":3}`, api.ErrReplicasNotSupported},
		{"A", `{"storage":"tape"}`, api.ErrInvalidJSON},
		{"A", `{"subjects":["a b"]}`, api.ErrStreamInvalidConfig},
		{"A", `{"sources":[{"name":"X"},{"name":"X"}]}`, api.ErrSourceDuplicate},
	} {
		if e := create(c.name, c.body); e.ErrCode != c.code {
			t.Errorf("create %s: %+v, want %d", c.body, e, c.code)
		}
	}
	if e := create("A", `{"num_replicas":3}`); e.Code != 500 || !strings.Contains(e.Description, "replicas") {
		t.Errorf("replicas error %+v", e)
	}
	var ok api.StreamCreateResponse
	requestJSON(t, nc, api.SubjStreamCreate+"A", `{"subjects":["a"],"allow_direct":false}`, &ok)
	if ok.Error != nil {
		t.Fatal(ok.Error)
	}
	got := request(t, nc, api.SubjStreamInfo+"NOPE", "").Data
	if want := `{"type":"io.nats.jetstream.api.v1.stream_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"},"total":0,"offset":0,"limit":0}`; string(got) != want {
		t.Errorf("info missing: %s", got)
	}
	for _, c := range []struct {
		subj, body string
		code       api.ErrCode
	}{
		{api.SubjMsgGet + "A", ``, api.ErrBadRequest},
		{api.SubjMsgGet + "A", `{"seq":1,"last_by_subj":"a"}`, api.ErrBadRequest},
		{api.SubjMsgGet + "NOPE", `{"seq":1}`, api.ErrStreamNotFound},
		{api.SubjMsgGet + "A", `{"last_by_subj":"a"}`, api.ErrNoMessageFound},
		{api.SubjMsgDelete + "A", `{"seq":5}`, api.ErrStreamMsgDeleteFailed}, // past the last: "stream store EOF"
		{api.SubjMsgDelete + "A", ``, api.ErrBadRequest},
		{api.SubjStreamDelete + "A", `{"x":1}`, api.ErrNotEmptyRequest},
		{api.SubjStreamDelete + "NOPE", ``, api.ErrStreamNotFound},
		{api.SubjStreamPurge + "A", `{"seq":2,"keep":1}`, api.ErrBadRequest},
		{api.SubjStreamPurge + "NOPE", ``, api.ErrStreamNotFound},
		{api.SubjStreamUpdate + "NOPE", `{"name":"NOPE"}`, api.ErrStreamNotFound},
		{api.SubjStreamUpdate + "A", `{"name":"A","subjects":["a"],"storage":"memory"}`, api.ErrStreamInvalidConfig},
		{api.SubjStreamNames, `{"subject":"a..b"}`, api.ErrBadRequest},
	} {
		var r api.Response
		requestJSON(t, nc, c.subj, c.body, &r)
		if r.Error == nil || r.Error.ErrCode != c.code || r.Error.Code != c.code.Status() {
			t.Errorf("%s %s: %+v, want %d", c.subj, c.body, r.Error, c.code)
		}
	}
	// Without allow_direct there is no responder, as with nats-server.
	if _, err := nc.Request(api.SubjDirectGet+"A", []byte(`{"seq":1}`), 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("%s: %v, want no responders", api.SubjDirectGet+"A", err)
	}
	// An unknown API is answered with an error (nats-server lets it time
	// out).
	var unknown api.Response
	requestJSON(t, nc, "$JS.API.NOPE.REQ", `{"seq":1}`, &unknown)
	if unknown.Error == nil || unknown.Error.ErrCode != api.ErrBadRequest {
		t.Errorf("$JS.API.NOPE.REQ: %+v, want a bad request error", unknown.Error)
	}
	var ai api.AccountInfoResponse
	requestJSON(t, nc, api.SubjAccountInfo, "", &ai)
	if ai.Streams != 1 || ai.API.Errors < 20 {
		t.Errorf("account info %+v", ai.AccountStats)
	}
}

// TestResourceLimits: streams whose max_bytes do not fit MaxStore are refused.
func TestResourceLimits(t *testing.T) {
	ts := startServer(t, Config{Sync: wal.SyncNever, MaxStore: 1 << 20, MaxMemory: 1 << 10})
	js, _ := njs.New(ts.connect())
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "A", MaxBytes: 1 << 19}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", MaxBytes: 1<<19 + 1}); apiCode(err) != 10047 {
		t.Fatalf("over MaxStore: %v", err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "M", MaxBytes: 1 << 11, Storage: njs.MemoryStorage}); apiCode(err) != 10028 {
		t.Fatalf("over MaxMemory: %v", err)
	}
}

// TestRestartManyStreams: a restart opens the stores of many streams at
// once (loadParallel); every stream comes back with its messages and
// consumers, and one whose meta.inf is damaged is reported and left out
// while the others load.
func TestRestartManyStreams(t *testing.T) {
	const n = 3*loadParallel + 5
	ts := startServer(t, Config{Sync: wal.SyncAlways})
	js, _ := njs.New(ts.connect())
	ctx := ctxT(t)
	for i := 0; i < n; i++ {
		s, err := js.CreateStream(ctx, njs.StreamConfig{Name: fmt.Sprintf("M%d", i), Subjects: []string{fmt.Sprintf("m.%d.*", i)}})
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= i; k++ {
			if _, err := js.Publish(ctx, fmt.Sprintf("m.%d.x", i), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreateConsumer(ctx, njs.ConsumerConfig{Durable: "D", AckPolicy: njs.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	ts.stop()
	bad := filepath.Join(ts.cfg.StoreDir, "jetstream", "$G", "streams", "M7", "meta.inf")
	if err := os.WriteFile(bad, []byte("{not json"), 0o640); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, ts.cfg)
	if errs := ts.js.LoadErrors(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "M7") {
		t.Fatalf("load errors %v, want one naming M7", errs)
	}
	js, _ = njs.New(ts.connect())
	for i := 0; i < n; i++ {
		s, err := js.Stream(ctx, fmt.Sprintf("M%d", i))
		if i == 7 {
			if err == nil {
				t.Fatal("the damaged stream M7 loaded")
			}
			continue
		}
		if err != nil {
			t.Fatalf("stream M%d after restart: %v", i, err)
		}
		if msgs := s.CachedInfo().State.Msgs; msgs != uint64(i+1) {
			t.Fatalf("stream M%d has %d messages after restart, want %d", i, msgs, i+1)
		}
		if _, err := s.Consumer(ctx, "D"); err != nil {
			t.Fatalf("consumer D of M%d after restart: %v", i, err)
		}
	}
}
