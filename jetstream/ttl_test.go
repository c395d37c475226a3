package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

func publishTTL(t *testing.T, js njs.JetStream, subj, ttl string) (*njs.PubAck, error) {
	t.Helper()
	m := nats.NewMsg(subj)
	if ttl != "" {
		m.Header.Set("Nats-TTL", ttl)
	}
	m.Data = []byte(subj)
	return js.PublishMsg(context.Background(), m)
}

// waitGone polls until seq is no longer in the stream.
func waitGone(t *testing.T, s njs.Stream, seq uint64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, err := s.GetMsg(context.Background(), seq); errors.Is(err, njs.ErrMsgNotFound) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("message %d did not expire within %v", seq, within)
}

// TestMessageTTL: with allow_msg_ttl, a message published with Nats-TTL is
// removed once its TTL passes (and the others stay), "never" and no header
// mean no expiry, a TTL under a second or unparsable gets 10165, and a
// stream without allow_msg_ttl refuses the header with 10166.
func TestMessageTTL(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := context.Background()
	s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowMsgTTL: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "N", Subjects: []string{"n.>"}}); err != nil {
		t.Fatal(err)
	}
	short, err := publishTTL(t, js, "t.short", "1s")
	if err != nil {
		t.Fatal(err)
	}
	for _, ttl := range []string{"", "never", "1h", "3600"} {
		if _, err := publishTTL(t, js, "t.keep", ttl); err != nil {
			t.Fatalf("ttl %q: %v", ttl, err)
		}
	}
	for ttl, code := range map[string]api.ErrCode{"500ms": api.ErrMessageTTLInvalid, "soon": api.ErrMessageTTLInvalid, "-5": api.ErrMessageTTLInvalid} {
		var apiErr *njs.APIError
		if _, err := publishTTL(t, js, "t.bad", ttl); !errors.As(err, &apiErr) || apiErr.ErrorCode != njs.ErrorCode(code) {
			t.Fatalf("ttl %q: %v, want error %d", ttl, err, code)
		}
	}
	var apiErr *njs.APIError
	if _, err := publishTTL(t, js, "n.x", "1h"); !errors.As(err, &apiErr) || apiErr.ErrorCode != njs.ErrorCode(api.ErrMessageTTLDisabled) {
		t.Fatalf("Nats-TTL on a stream without allow_msg_ttl: %v, want 10166", err)
	}
	waitGone(t, s, short.Sequence, 10*time.Second)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 4 {
		t.Fatalf("%d messages left, want the 4 without a short TTL", info.State.Msgs)
	}
}

// TestMessageTTLSurvivesRestarts: a TTL set before a clean restart, and one
// set before a crash (a copy of the store taken while the server runs, as
// kill -9 leaves it), still expire after the restart.
func TestMessageTTLSurvivesRestarts(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowMsgTTL: true}); err != nil {
		t.Fatal(err)
	}
	a, err := publishTTL(t, js, "t.a", "2s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := publishTTL(t, js, "t.keep", ""); err != nil {
		t.Fatal(err)
	}
	// The crash image, taken while the server runs.
	crashed := t.TempDir()
	b, err := publishTTL(t, js, "t.b", "2s")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(crashed, os.DirFS(ts.cfg.StoreDir)); err != nil {
		t.Fatal(err)
	}
	ts = ts.restart() // clean
	js, _ = njs.New(ts.connect())
	s, err := js.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, s, a.Sequence, 10*time.Second)
	waitGone(t, s, b.Sequence, 10*time.Second)
	ts.stop()

	cfg := ts.cfg
	cfg.StoreDir = crashed
	ts = startServer(t, cfg)
	js, _ = njs.New(ts.connect())
	if s, err = js.Stream(ctx, "T"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, s, b.Sequence, 10*time.Second)
	if _, err := s.GetMsg(ctx, 2); err != nil {
		t.Fatalf("the message without a TTL is gone after the crash restart: %v", err)
	}
}

// measureExpiry publishes n messages 100 ms apart through pub (i the
// message's index) and returns, for each, how long after its deadline
// (stored time + life) it was seen gone. It polls the stream's first
// sequence (one request per round): the messages expire in order.
func measureExpiry(t *testing.T, js njs.JetStream, stream string, n int, life time.Duration, pub func(i int) (*njs.PubAck, error)) []time.Duration {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	deadlines := make([]time.Time, n)
	seqs := make([]uint64, n)
	for i := range n {
		ack, err := pub(i)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.GetMsg(ctx, ack.Sequence)
		if err != nil {
			t.Fatal(err)
		}
		seqs[i], deadlines[i] = ack.Sequence, m.Time.Add(life)
		time.Sleep(100 * time.Millisecond)
	}
	late := make([]time.Duration, n)
	next := 0
	stop := deadlines[n-1].Add(5 * time.Second)
	for next < n && time.Now().Before(stop) {
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for next < n && (info.State.Msgs == 0 || info.State.FirstSeq > seqs[next]) {
			late[next] = now.Sub(deadlines[next])
			next++
		}
		time.Sleep(10 * time.Millisecond)
	}
	if next < n {
		t.Fatalf("message %d (seq %d) still there %s after its deadline", next, seqs[next], time.Since(deadlines[next]))
	}
	return late
}

// checkExpiryOnTime: every message went at its deadline: not before it
// (beyond clock noise), and well within half a second after it. The
// messages were stored over more than a second, so their deadlines fall
// at every phase of a second: expiry polled once a second (the old
// sweep) leaves at least one of them 0.9 s late, whatever the poll's
// phase, where a timer on the deadline is late by the polling of this
// test only.
func checkExpiryOnTime(t *testing.T, late []time.Duration) {
	t.Helper()
	for i, l := range late {
		if l < -100*time.Millisecond || l > 500*time.Millisecond {
			t.Fatalf("message %d gone %s after its deadline; want within [0, 0.5s] (all: %v)", i, l, late)
		}
	}
}

// TestMessageTTLExpiresAtDeadline: a message with a 2 s Nats-TTL is gone
// at its deadline, as with nats-server (nats.py saw one still there at
// 2.5 s: expiry was polled once a second).
func TestMessageTTLExpiresAtDeadline(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	if _, err := js.CreateStream(context.Background(), njs.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowMsgTTL: true}); err != nil {
		t.Fatal(err)
	}
	late := measureExpiry(t, js, "T", 12, 2*time.Second, func(i int) (*njs.PubAck, error) {
		return publishTTL(t, js, "t.x", "2s")
	})
	t.Logf("late: %v", late)
	checkExpiryOnTime(t, late)
}

// TestMaxAgeWithMarkersExpiresAtDeadline: on a stream that leaves subject
// delete markers (so applies max_age itself, as a KV bucket with
// limit_marker_ttl does), a message goes when it passes max_age, not at
// the next tick of a poll.
func TestMaxAgeWithMarkersExpiresAtDeadline(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	if _, err := js.CreateStream(context.Background(), njs.StreamConfig{Name: "A", Subjects: []string{"a.>"},
		AllowMsgTTL: true, SubjectDeleteMarkerTTL: time.Minute, MaxAge: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	late := measureExpiry(t, js, "A", 12, 2*time.Second, func(i int) (*njs.PubAck, error) {
		return js.Publish(context.Background(), "a."+strconv.Itoa(i), nil)
	})
	t.Logf("late: %v", late)
	checkExpiryOnTime(t, late)
}

// TestMessageTTLCannotBeDisabled: as with nats-server, an update may turn
// subject delete markers off but not allow_msg_ttl (10052 "message TTL
// status can not be disabled"; nats.js's "jsm - stream message ttls").
func TestMessageTTLCannotBeDisabled(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	update := func(body string) api.StreamCreateResponse {
		t.Helper()
		var r api.StreamCreateResponse
		if err := json.Unmarshal(request(t, nc, "$JS.API.STREAM.UPDATE.T", body).Data, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var c api.StreamCreateResponse
	if err := json.Unmarshal(request(t, nc, "$JS.API.STREAM.CREATE.T",
		`{"name":"T","subjects":["t.>"],"allow_msg_ttl":true,"subject_delete_marker_ttl":60000000000}`).Data, &c); err != nil || c.Error != nil {
		t.Fatalf("create: %v %+v", err, c.Error)
	}
	if r := update(`{"name":"T","subjects":["t.>"],"allow_msg_ttl":true,"subject_delete_marker_ttl":0}`); r.Error != nil {
		t.Fatalf("turning markers off: %+v", r.Error)
	}
	r := update(`{"name":"T","subjects":["t.>"],"allow_msg_ttl":false}`)
	if r.Error == nil || r.Error.Code != 500 || r.Error.ErrCode != api.ErrStreamInvalidConfig ||
		r.Error.Description != "message TTL status can not be disabled" {
		t.Fatalf("turning TTLs off: %+v, want 500 10052 %q", r.Error, "message TTL status can not be disabled")
	}
}

// TestMessageTTLNumberForms: a Nats-TTL number of seconds is decimal
// digits only, as nats-server reads it: "+5" is refused (10165), and the
// largest int64, 9223372036854775807 seconds, is stored (and not expired);
// one past it is refused.
func TestMessageTTLNumberForms(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := context.Background()
	s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "T", Subjects: []string{"t.>"}, AllowMsgTTL: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ttl := range []string{"+5", "0x10", "9223372036854775808"} {
		var apiErr *njs.APIError
		if _, err := publishTTL(t, js, "t.bad", ttl); !errors.As(err, &apiErr) || apiErr.ErrorCode != njs.ErrorCode(api.ErrMessageTTLInvalid) {
			t.Fatalf("ttl %q: %v, want error 10165", ttl, err)
		}
	}
	ack, err := publishTTL(t, js, "t.max", "9223372036854775807")
	if err != nil {
		t.Fatalf("ttl 9223372036854775807: %v", err)
	}
	m, err := s.GetMsg(ctx, ack.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Get("Nats-TTL"); got != "9223372036854775807" {
		t.Fatalf("stored Nats-TTL %q", got)
	}
	// The deadline is far away: a restart reloads it and keeps the message.
	ts = ts.restart()
	nc = ts.connect()
	js, _ = njs.New(nc)
	if s, err = js.Stream(ctx, "T"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // an expiry pass runs at start
	if _, err := s.GetMsg(ctx, ack.Sequence); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}
