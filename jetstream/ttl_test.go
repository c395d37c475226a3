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
