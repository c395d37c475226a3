package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

func jsOf(t *testing.T, ts *testServer) njs.JetStream {
	t.Helper()
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestMirror: a mirror holds its origin's messages at the origin's
// sequences (gaps included), follows new ones, reports its lag, resumes
// after a restart with nothing repeated or lost, and refuses what
// nats-server refuses.
func TestMirror(t *testing.T) {
	ts := startServer(t, fastSync())
	js := jsOf(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "O", Subjects: []string{"o.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		if _, err := js.Publish(ctx, fmt.Sprintf("o.%d", i%3), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	o, _ := js.Stream(ctx, "O")
	if err := o.DeleteMsg(ctx, 4); err != nil {
		t.Fatal(err)
	}
	m, err := js.CreateStream(ctx, njs.StreamConfig{Name: "M", Mirror: &njs.StreamSource{Name: "O"}})
	if err != nil {
		t.Fatal(err)
	}
	waitMirror := func(m njs.Stream, last uint64, msgs uint64) {
		t.Helper()
		eventually(t, "mirror caught up", func() bool {
			info, err := m.Info(ctx)
			return err == nil && info.State.LastSeq == last && info.State.Msgs == msgs && info.Mirror != nil && info.Mirror.Lag == 0
		})
	}
	waitMirror(m, 10, 9)
	checkSame := func(m njs.Stream, last uint64) {
		t.Helper()
		for seq := uint64(1); seq <= last; seq++ {
			want, werr := o.GetMsg(ctx, seq)
			got, gerr := m.GetMsg(ctx, seq)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("seq %d: origin %v, mirror %v", seq, werr, gerr)
			}
			if werr == nil && (got.Subject != want.Subject || string(got.Data) != string(want.Data)) {
				t.Fatalf("seq %d: mirror %s %q, origin %s %q", seq, got.Subject, got.Data, want.Subject, want.Data)
			}
		}
	}
	checkSame(m, 10)
	for i := 11; i <= 20; i++ {
		if _, err := js.Publish(ctx, "o.x", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitMirror(m, 20, 19)

	// Restart: the mirror resumes after its last message.
	ts = ts.restart()
	js = jsOf(t, ts)
	for i := 21; i <= 25; i++ {
		if _, err := js.Publish(ctx, "o.y", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if m, err = js.Stream(ctx, "M"); err != nil {
		t.Fatalf("mirror after restart: %v (load errors %v)", err, ts.js.LoadErrors())
	}
	o, _ = js.Stream(ctx, "O")
	waitMirror(m, 25, 24)
	checkSame(m, 25)

	// What nats-server refuses.
	for _, c := range []struct {
		cfg  njs.StreamConfig
		code njs.ErrorCode
	}{
		{njs.StreamConfig{Name: "X1", Subjects: []string{"x1"}, Mirror: &njs.StreamSource{Name: "O"}}, 10034},
		{njs.StreamConfig{Name: "X2", Mirror: &njs.StreamSource{Name: "O"}, Sources: []*njs.StreamSource{{Name: "O"}}}, 10031},
		{njs.StreamConfig{Name: "X3", Sources: []*njs.StreamSource{{Name: "O"}, {Name: "O"}}}, 10140},
		{njs.StreamConfig{Name: "X4", Mirror: &njs.StreamSource{Name: "a.b"}}, 10142},
	} {
		_, err := js.CreateStream(ctx, c.cfg)
		var apiErr *njs.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode != c.code {
			t.Errorf("%s: got %v, want error %d", c.cfg.Name, err, c.code)
		}
	}
	cfg := m.CachedInfo().Config
	cfg.Mirror = &njs.StreamSource{Name: "O", FilterSubject: "o.x"}
	_, err = js.UpdateStream(ctx, cfg)
	var apiErr *njs.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10055 {
		t.Errorf("mirror update: %v, want 10055", err)
	}
}

// TestSources: a stream sourcing two streams (one through a filter) holds
// each origin message once, marked with Nats-Stream-Source, keeps taking
// new ones, and after a restart repeats none.
func TestSources(t *testing.T) {
	ts := startServer(t, fastSync())
	js := jsOf(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range []string{"A", "B"} {
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: n, Subjects: []string{n + ".>"}}); err != nil {
			t.Fatal(err)
		}
	}
	pub := func(from, to int) {
		for i := from; i <= to; i++ {
			for _, subj := range []string{"A.x", "B.keep", "B.drop"} {
				if _, err := js.Publish(ctx, subj, []byte(fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	pub(1, 10)
	agg, err := js.CreateStream(ctx, njs.StreamConfig{Name: "AGG", Sources: []*njs.StreamSource{{Name: "A"}, {Name: "B", FilterSubject: "B.keep"}}})
	if err != nil {
		t.Fatal(err)
	}
	wait := func(agg njs.Stream, n uint64) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d sourced", n), func() bool {
			info, err := agg.Info(ctx)
			return err == nil && info.State.Msgs == n && len(info.Sources) == 2
		})
	}
	wait(agg, 20)
	pub(11, 15)
	wait(agg, 30)
	ts = ts.restart()
	js = jsOf(t, ts)
	pub(16, 20)
	if agg, err = js.Stream(ctx, "AGG"); err != nil {
		t.Fatalf("after restart: %v (load errors %v)", err, ts.js.LoadErrors())
	}
	wait(agg, 40)
	time.Sleep(300 * time.Millisecond) // a feed that repeated would add more now
	info, _ := agg.Info(ctx)
	if info.State.Msgs != 40 {
		t.Fatalf("%d messages after the restart, want 40", info.State.Msgs)
	}
	seen := map[string]bool{}
	for seq := uint64(1); seq <= 40; seq++ {
		m, err := agg.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject == "B.drop" {
			t.Fatalf("filtered-out subject sourced at %d", seq)
		}
		src := m.Header.Get("Nats-Stream-Source")
		if src == "" || seen[src] {
			t.Fatalf("seq %d: source header %q (seen before: %v)", seq, src, seen[src])
		}
		seen[src] = true
	}
}

// TestSourceTransforms: a source's subject_transforms choose and rename
// what it copies; an external source naming this server's own $JS.API is
// refused with nats-server's 10021.
func TestSourceTransforms(t *testing.T) {
	ts := startServer(t, fastSync())
	js := jsOf(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range []string{"T", "U"} {
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: n, Subjects: []string{n + ".>"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, subj := range []string{"T.a", "T.b.c", "T.d", "U.x"} {
		if _, err := js.Publish(ctx, subj, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := js.CreateStream(ctx, njs.StreamConfig{Name: "EXT", Sources: []*njs.StreamSource{
		{Name: "U", External: &njs.ExternalStream{APIPrefix: "$JS.API"}},
	}})
	var apiErr *njs.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10021 || apiErr.Code != 400 ||
		apiErr.Description != "stream external api prefix $JS.API must not overlap with $JS.API" {
		t.Fatalf("external source on this server's own $JS.API: %v, want 400 10021", err)
	}
	agg, err := js.CreateStream(ctx, njs.StreamConfig{Name: "AGG", Sources: []*njs.StreamSource{
		{Name: "T", SubjectTransforms: []njs.SubjectTransformConfig{{Source: "T.a", Destination: "copy.a"}, {Source: "T.d", Destination: "copy.d"}}},
		{Name: "U"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "sourced", func() bool {
		info, err := agg.Info(ctx)
		return err == nil && info.State.Msgs == 3
	})
	got := map[string]string{}
	for seq := uint64(1); seq <= 3; seq++ {
		m, err := agg.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		got[m.Subject] = string(m.Data)
	}
	if got["copy.a"] != "T.a" || got["copy.d"] != "T.d" || got["U.x"] != "U.x" {
		t.Fatalf("sourced %v", got)
	}
}

// TestSourceConfigRefusalsWire: the refusals of mirror and source configs
// that clients compare, as nats-server words them: a source whose subject
// transforms overlap (10147), and mirror_direct on a stream that mirrors
// nothing, which nats-server checks on create before anything else in the
// config (10052 with its text).
func TestSourceConfigRefusalsWire(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	for _, c := range []struct {
		name, body string
		code       int
		errCode    api.ErrCode
		desc       string
	}{
		{"OV", `{"name":"OV","sources":[{"name":"O","subject_transforms":[{"src":"a.>","dest":"x.>"},{"src":"a.b","dest":"y"}]}]}`,
			400, api.ErrSourceOverlappingFilters, "source filters can not overlap"},
		{"MD", `{"name":"MD","subjects":["a..b"],"mirror_direct":true}`,
			500, api.ErrStreamInvalidConfig, "stream has no mirror but does have mirror direct"},
	} {
		var r api.StreamCreateResponse
		requestJSON(t, nc, api.SubjStreamCreate+c.name, c.body, &r)
		if r.Error == nil || r.Error.Code != c.code || r.Error.ErrCode != c.errCode || r.Error.Description != c.desc {
			t.Errorf("%s: %+v, want %d %d %q", c.name, r.Error, c.code, c.errCode, c.desc)
		}
	}
}

// TestMirrorPromotion: an update without the mirror promotes a mirror to
// an ordinary stream (nats-server 2.12+): it keeps what it copied, copies
// no more, takes the defaults an ordinary stream gets (its name as its
// subject, a duplicate window), accepts publishes, and keeps being one
// after a restart; adding a mirror back is refused (10055).
func TestMirrorPromotion(t *testing.T) {
	ts := startServer(t, fastSync())
	js := jsOf(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "A", Subjects: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	b, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", Mirror: &njs.StreamSource{Name: "A",
		SubjectTransforms: []njs.SubjectTransformConfig{{Source: "a", Destination: "b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "mirror copied 1", func() bool {
		info, err := b.Info(ctx)
		return err == nil && info.State.Msgs == 1
	})
	cfg := b.CachedInfo().Config
	cfg.Mirror = nil
	upd, err := js.UpdateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	info := upd.CachedInfo()
	if info.Config.Mirror != nil || len(info.Config.Subjects) != 1 || info.Config.Subjects[0] != "B" ||
		info.Config.Duplicates != 2*time.Minute || info.Mirror != nil || info.State.Msgs != 1 {
		t.Fatalf("promoted: mirror %+v subjects %v duplicates %v info mirror %+v msgs %d",
			info.Config.Mirror, info.Config.Subjects, info.Config.Duplicates, info.Mirror, info.State.Msgs)
	}
	if _, err := js.Publish(ctx, "a", []byte("2")); err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, "B", []byte("own"))
	if err != nil || ack.Stream != "B" || ack.Sequence != 2 {
		t.Fatalf("publish to the promoted stream: %+v %v", ack, err)
	}
	ts = ts.restart()
	js = jsOf(t, ts)
	if b, err = js.Stream(ctx, "B"); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "a", []byte("3")); err != nil {
		t.Fatal(err)
	}
	// Nothing more is copied: B holds the copy of 1 and its own message.
	st, err := b.GetMsg(ctx, 1)
	if err != nil || st.Subject != "b" {
		t.Fatalf("copied message: %+v %v", st, err)
	}
	if info, err := b.Info(ctx); err != nil || info.State.Msgs != 2 || info.Config.Mirror != nil {
		t.Fatalf("after restart: %+v %v", info, err)
	}
	cfg = b.CachedInfo().Config
	cfg.Mirror = &njs.StreamSource{Name: "A"}
	cfg.Subjects = nil
	_, err = js.UpdateStream(ctx, cfg)
	var apiErr *njs.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10055 {
		t.Errorf("adding a mirror back: %v, want 10055", err)
	}
}
