package jetstream

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
)

// TestSubjectDeleteMarkerConfig: nats-server's rules and texts (10052) for
// subject_delete_marker_ttl; without pedantic mode the TTL turns on
// allow_msg_ttl and allow_rollup (and deny_purge off).
func TestSubjectDeleteMarkerConfig(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	create := func(name, cfg string) api.StreamCreateResponse {
		t.Helper()
		var resp api.StreamCreateResponse
		requestJSON(t, nc, api.Prefix+"STREAM.CREATE."+name, `{"name":"`+name+`"`+cfg+`}`, &resp)
		return resp
	}
	for _, c := range []struct{ cfg, want string }{
		{`,"subject_delete_marker_ttl":500000000,"allow_msg_ttl":true,"allow_rollup_hdrs":true`, "subject delete marker TTL must be at least 1 second"},
		{`,"subject_delete_marker_ttl":-1000000000`, "subject delete marker TTL must not be negative"},
		{`,"subject_delete_marker_ttl":1000000000,"allow_rollup_hdrs":true,"pedantic":true`, "subject delete marker cannot be set if message TTLs are disabled"},
		{`,"subject_delete_marker_ttl":1000000000,"allow_msg_ttl":true,"pedantic":true`, "subject delete marker cannot be set if roll-ups are disabled"},
	} {
		resp := create("B", c.cfg)
		if resp.Error == nil || resp.Error.ErrCode != api.ErrStreamInvalidConfig || resp.Error.Description != c.want {
			t.Fatalf("create %s: %+v, want 10052 %q", c.cfg, resp.Error, c.want)
		}
	}
	resp := create("S", `,"subject_delete_marker_ttl":2000000000,"deny_purge":true`)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if c := resp.Config; !c.AllowMsgTTL || !c.AllowRollup || c.DenyPurge || c.SubjectDeleteMarkerTTL != 2*time.Second {
		t.Fatalf("config not adjusted for markers: ttl=%v rollup=%v deny_purge=%v marker=%v", c.AllowMsgTTL, c.AllowRollup, c.DenyPurge, c.SubjectDeleteMarkerTTL)
	}
	if lvl := resp.Config.Metadata[api.MetaRequiredLevel]; lvl != "1" {
		t.Fatalf("required level %q, want 1", lvl)
	}
	// Mirrors: refused with nats-server's text once mirrors pass the
	// earlier checks.
	cfg := api.StreamConfig{Name: "M", Mirror: []byte(`{"name":"S"}`), SubjectDeleteMarkerTTL: time.Second}
	if aerr := validate.NormalizeMarkers(&cfg); aerr == nil || aerr.Description != "subject delete markers forbidden on mirrors" {
		t.Fatalf("markers on a mirror: %+v", aerr)
	}
}

// checkMarker fails unless m is a subject delete marker for subj as
// nats-server writes one, with marker TTL ttl.
func checkMarker(t *testing.T, m *njs.RawStreamMsg, subj, ttl string) {
	t.Helper()
	if m.Subject != subj || len(m.Data) != 0 ||
		m.Header.Get("Nats-Marker-Reason") != "MaxAge" || m.Header.Get("Nats-TTL") != ttl || m.Header.Get("Nats-Rollup") != "sub" {
		t.Fatalf("not a marker for %s (ttl %s): subject %q header %v data %q", subj, ttl, m.Subject, m.Header, m.Data)
	}
}

// lastOf polls until the last message on subj satisfies ok and returns it.
func lastOf(t *testing.T, s njs.Stream, subj string, ok func(*njs.RawStreamMsg) bool) *njs.RawStreamMsg {
	t.Helper()
	var got *njs.RawStreamMsg
	eventually(t, "last message of "+subj, func() bool {
		m, err := s.GetLastMsgForSubject(context.Background(), subj)
		if err == nil && ok(m) {
			got = m
			return true
		}
		return false
	})
	return got
}

func isMarker(m *njs.RawStreamMsg) bool { return m.Header.Get("Nats-Marker-Reason") != "" }

// TestSubjectDeleteMarkers: on both stores, a message removed by its TTL or
// by max_age leaves a marker when it was the last of its subject, and none
// otherwise; the marker expires after its own TTL without leaving another;
// a message whose TTL is "never" outlives max_age; a TTL below the marker
// TTL is raised to it.
func TestSubjectDeleteMarkers(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := context.Background()
		s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: storage,
			AllowMsgTTL: true, AllowRollup: true, SubjectDeleteMarkerTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		b1, err := publishTTL(t, js, "t.b", "1s") // not the last of t.b: no marker
		if err != nil {
			t.Fatal(err)
		}
		if _, err := publishTTL(t, js, "t.b", ""); err != nil {
			t.Fatal(err)
		}
		a, err := publishTTL(t, js, "t.a", "1s")
		if err != nil {
			t.Fatal(err)
		}
		mk := lastOf(t, s, "t.a", isMarker)
		checkMarker(t, mk, "t.a", "1s")
		waitGone(t, s, a.Sequence, 10*time.Second)
		waitGone(t, s, b1.Sequence, 10*time.Second)
		if m, err := s.GetLastMsgForSubject(ctx, "t.b"); err != nil || isMarker(m) {
			t.Fatalf("t.b: %v %v, want its message without a TTL", m, err)
		}
		// The marker goes in turn, leaving nothing on t.a.
		waitGone(t, s, mk.Sequence, 10*time.Second)
		if _, err := s.GetLastMsgForSubject(ctx, "t.a"); !errors.Is(err, njs.ErrMsgNotFound) {
			t.Fatalf("t.a after its marker expired: %v", err)
		}

		// max_age with markers; "never" outlives it.
		s, err = js.CreateStream(ctx, njs.StreamConfig{Name: "A", Subjects: []string{"a.>"}, Storage: storage,
			MaxAge: time.Second, Duplicates: time.Second, SubjectDeleteMarkerTTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		x, err := publishTTL(t, js, "a.x", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := publishTTL(t, js, "a.never", "never"); err != nil {
			t.Fatal(err)
		}
		short, err := publishTTL(t, js, "a.short", "1s") // raised to the marker TTL
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.GetMsg(ctx, short.Sequence)
		if err != nil || m.Header.Get("Nats-TTL") != "5" {
			t.Fatalf("Nats-TTL of a 1s message with 5s markers: %v %v, want 5", m, err)
		}
		checkMarker(t, lastOf(t, s, "a.x", isMarker), "a.x", "5s")
		waitGone(t, s, x.Sequence, 10*time.Second)
		if m, err := s.GetLastMsgForSubject(ctx, "a.never"); err != nil || isMarker(m) {
			t.Fatalf("a.never past max_age: %v %v", m, err)
		}
	})
}

// TestKVLimitMarkers: a KV bucket with LimitMarkerTTL (nats.go), a key
// created with KeyTTL: its watcher sees the put and then the key purged
// when it expires, Get finds no key, and Create works again over the marker.
func TestKVLimitMarkers(t *testing.T) {
	ts := startServer(t, fastSync())
	js, _ := njs.New(ts.connect())
	ctx := context.Background()
	kv, err := js.CreateKeyValue(ctx, njs.KeyValueConfig{Bucket: "B", LimitMarkerTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil || st.(*njs.KeyValueBucketStatus).LimitMarkerTTL() != 2*time.Second {
		t.Fatalf("bucket status: %v %v", st, err)
	}
	w, err := kv.Watch(ctx, "k", njs.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := kv.Create(ctx, "k", []byte("v"), njs.KeyTTL(time.Second)); err != nil {
		t.Fatal(err)
	}
	next := func() njs.KeyValueEntry {
		t.Helper()
		select {
		case e := <-w.Updates():
			if e == nil {
				t.Fatal("watcher closed")
			}
			return e
		case <-time.After(20 * time.Second):
			t.Fatal("watcher saw nothing")
		}
		return nil
	}
	if e := next(); e.Operation() != njs.KeyValuePut || string(e.Value()) != "v" {
		t.Fatalf("first update: %v %q", e.Operation(), e.Value())
	}
	if e := next(); e.Operation() != njs.KeyValuePurge || e.Key() != "k" {
		t.Fatalf("update after the TTL: %v on %q, want a purge of k", e.Operation(), e.Key())
	}
	if _, err := kv.Get(ctx, "k"); !errors.Is(err, njs.ErrKeyNotFound) {
		t.Fatalf("Get of an expired key: %v", err)
	}
	if _, err := kv.Create(ctx, "k", []byte("again")); err != nil {
		t.Fatalf("Create over the marker: %v", err)
	}
	if e := next(); e.Operation() != njs.KeyValuePut || string(e.Value()) != "again" {
		t.Fatalf("update after re-create: %v %q", e.Operation(), e.Value())
	}
}

// TestSubjectDeleteMarkersSurviveRestarts: a message whose TTL passes while
// the server is down gets its marker after a clean restart and after a
// crash (a copy of the store taken while the server runs, as kill -9 leaves
// it); a stored marker stays across a restart until its own TTL.
func TestSubjectDeleteMarkersSurviveRestarts(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := context.Background()
	// Markers of an hour raise shorter message TTLs to an hour, except
	// with max_msgs_per_subject 1, as in nats-server: so that is used here.
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "T", Subjects: []string{"t.>"}, SubjectDeleteMarkerTTL: time.Hour,
		MaxMsgsPerSubject: 1}); err != nil {
		t.Fatal(err)
	}
	pub := func(subj string) {
		t.Helper()
		m := nats.NewMsg(subj)
		m.Header.Set("Nats-TTL", "2")
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	pub("t.a")
	crashed := t.TempDir()
	pub("t.b")
	if err := os.CopyFS(crashed, os.DirFS(ts.cfg.StoreDir)); err != nil {
		t.Fatal(err)
	}
	ts.stop()
	time.Sleep(2 * time.Second) // let the TTLs pass while the server is down (not synchronisation)
	ts = startServer(t, ts.cfg)
	js, _ = njs.New(ts.connect())
	s, err := js.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"t.a", "t.b"} {
		checkMarker(t, lastOf(t, s, subj, isMarker), subj, "1h0m0s")
	}
	ts = ts.restart()
	js, _ = njs.New(ts.connect())
	if s, err = js.Stream(ctx, "T"); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"t.a", "t.b"} {
		m, err := s.GetLastMsgForSubject(ctx, subj)
		if err != nil {
			t.Fatalf("marker of %s after a restart: %v", subj, err)
		}
		checkMarker(t, m, subj, "1h0m0s")
	}
	ts.stop()

	cfg := ts.cfg
	cfg.StoreDir = crashed
	ts = startServer(t, cfg)
	js, _ = njs.New(ts.connect())
	if s, err = js.Stream(ctx, "T"); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"t.a", "t.b"} {
		checkMarker(t, lastOf(t, s, subj, isMarker), subj, "1h0m0s")
	}
}
