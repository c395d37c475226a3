package jetstream

import (
	"strings"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/server"
)

func TestPushRateTake(t *testing.T) {
	const sec = int64(time.Second)
	r := newPushRate(8*1000, 500) // 1000 bytes a second, burst 500
	now := 10 * sec
	if next := r.take(now, 300); next != 0 {
		t.Fatalf("first 300 bytes wait until %d", next)
	}
	// 200 left: 300 more need 100 bytes, a tenth of a second.
	if next := r.take(now, 300); next != now+sec/10 {
		t.Fatalf("second 300 bytes: %d, want %d", next-now, sec/10)
	}
	if next := r.take(now+sec/10, 300); next != 0 {
		t.Fatalf("after the wait: %d", next)
	}
	// A message larger than the burst waits for a full bucket, then leaves
	// it in debt: 2000 bytes from a full 500 owe 1500, i.e. 2s for the next
	// 500-byte bucket.
	now += 10 * sec
	if next := r.take(now, 2000); next != 0 {
		t.Fatalf("oversized with a full bucket: %d", next)
	}
	if next := r.take(now, 500); next != now+2*sec {
		t.Fatalf("after debt: %d, want %d", next-now, 2*sec)
	}
	// Below 8 bps the bucket never refills: once spent, retry much later.
	z := newPushRate(7, 500)
	if next := z.take(now, 500); next != 0 {
		t.Fatalf("zero rate, full bucket: %d", next)
	}
	if next := z.take(now+sec, 1); next != now+sec+rateRetry {
		t.Fatalf("zero rate: %d", next)
	}
}

// TestConsumerRateLimit: a push consumer with rate_limit_bps sends no
// faster than its rate after the first burst (the server's max payload).
func TestConsumerRateLimit(t *testing.T) {
	const (
		perSec  = 4000 // bytes a second
		msgs    = 25
		payload = 300
	)
	ts := startServerWith(t, fastSync(), server.Options{MaxPayload: 1024})
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "RL", Subjects: []string{"rl.in"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < msgs; i++ {
		if _, err := js.Publish(ctxT(t), "rl.in", make([]byte, payload)); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := nc.SubscribeSync("rl.deliver")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := js.CreateOrUpdateConsumer(ctxT(t), "RL", njs.ConsumerConfig{Durable: "C", DeliverSubject: "rl.deliver",
		AckPolicy: njs.AckNonePolicy, RateLimit: 8 * perSec})
	if err != nil {
		t.Fatal(err)
	}
	if c.CachedInfo().Config.RateLimit != 8*perSec {
		t.Fatalf("consumer config: %+v", c.CachedInfo().Config)
	}
	total := 0
	for i := 0; i < msgs; i++ {
		m, err := sub.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
		// The bucket counts a message as the server sizes it: the stream
		// subject it was stored under (not the delivery subject), the ack
		// reply and the payload.
		total += len("rl.in") + len(m.Reply) + len(m.Data)
	}
	elapsed := time.Since(start)
	// Everything past the 1024-byte burst goes at perSec at most. A slow
	// machine only makes this longer.
	if least := time.Duration(float64(total-1024) / perSec * float64(time.Second)); elapsed < least {
		t.Fatalf("%d bytes in %v: faster than %d bytes/s (at least %v)", total, elapsed, perSec, least)
	}
}

// TestPullRequestLimits: max_batch, max_expires and max_bytes refuse the
// requests that pass them with nats-server's 409 statuses, seen through
// nats.go and on the wire.
func TestPullRequestLimits(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "PL", Subjects: []string{"pl.*"}})
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "pl.a", 0, 5)
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy,
		MaxRequestBatch: 3, MaxRequestExpires: time.Second, MaxRequestMaxBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		want string
		do   func() (njs.MessageBatch, error)
	}{
		{"Exceeded MaxRequestBatch of 3", func() (njs.MessageBatch, error) { return c.Fetch(4, njs.FetchMaxWait(time.Second)) }},
		{"Exceeded MaxRequestExpires of 1s", func() (njs.MessageBatch, error) { return c.Fetch(1, njs.FetchMaxWait(2*time.Second)) }},
	} {
		b, err := f.do()
		if err == nil {
			for range b.Messages() {
				t.Errorf("%s: got a message", f.want)
			}
			err = b.Error()
		}
		if err == nil || !strings.Contains(err.Error(), f.want) {
			t.Errorf("fetch: %v, want %q", err, f.want)
		}
	}
	// Within the limits the requests are served.
	b, err := c.Fetch(3, njs.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range b.Messages() {
		n++
	}
	if n != 3 || b.Error() != nil {
		t.Fatalf("fetch 3: %d messages, %v", n, b.Error())
	}
	// On the wire: a bare 409 status with nats-server's text.
	for body, want := range map[string]string{
		`{"batch":1,"expires":1500000000}`: "Exceeded MaxRequestExpires of 1s",
		`{"batch":1,"max_bytes":5000}`:     "Exceeded MaxRequestMaxBytes of 4096",
		`4`:                                "Exceeded MaxRequestBatch of 3",
	} {
		m := request(t, nc, api.SubjConsumerNext+"PL.C", body)
		if m.Header.Get("Status") != "409" || m.Header.Get("Description") != want || len(m.Data) != 0 {
			t.Errorf("%s: %v %q, want 409 %q", body, m.Header, m.Data, want)
		}
	}
}

// TestConsumerRequestLimitConfig: the config rules nats-server applies to
// rate_limit_bps and the pull request limits.
func TestConsumerRequestLimitConfig(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  string
		code api.ErrCode
		desc string
	}{
		{`{"durable_name":"p","ack_policy":"explicit","rate_limit_bps":1000}`, api.ErrConsumerPullWithRateLimit, "consumer in pull mode can not have rate limit set"},
		{`{"durable_name":"p","ack_policy":"explicit","max_expires":500000}`, api.ErrConsumerMaxRequestExpires, "consumer max request expires needs to be >= 1ms"},
	} {
		var resp api.ConsumerInfoResponse
		requestJSON(t, nc, api.SubjConsumerCreate+"S", `{"stream_name":"S","config":`+c.cfg+`}`, &resp)
		if resp.Error == nil || resp.Error.ErrCode != c.code || resp.Error.Description != c.desc {
			t.Errorf("%s: %+v, want %d %q", c.cfg, resp.Error, c.code, c.desc)
		}
	}
	// Negative limits are no limits, as nats-server outside pedantic mode.
	var resp api.ConsumerInfoResponse
	requestJSON(t, nc, api.SubjConsumerCreate+"S", `{"stream_name":"S","config":{"durable_name":"n","ack_policy":"explicit",`+
		`"max_batch":-1,"max_expires":-1,"max_bytes":-1,"max_waiting":-1}}`, &resp)
	if resp.Error != nil || resp.ConsumerInfo == nil {
		t.Fatalf("negative limits: %+v", resp.Error)
	}
	if cfg := resp.ConsumerInfo.Config; cfg.MaxRequestBatch != 0 || cfg.MaxRequestExpires != 0 || cfg.MaxRequestMaxBytes != 0 || cfg.MaxWaiting != validate.DefaultMaxWaiting {
		t.Fatalf("negative limits stored as %+v", cfg)
	}
	// A push consumer keeps its rate limit through an update, and can drop it.
	sub, err := nc.SubscribeSync("push.here")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for _, bps := range []uint64{8000, 16000, 0} {
		ci, err := js.CreateOrUpdateConsumer(ctxT(t), "S", njs.ConsumerConfig{Durable: "push", DeliverSubject: "push.here",
			AckPolicy: njs.AckExplicitPolicy, RateLimit: bps})
		if err != nil || ci.CachedInfo().Config.RateLimit != bps {
			t.Fatalf("rate %d: %+v %v", bps, ci, err)
		}
	}
	publishN(t, js, "s.a", 0, 1)
	if _, err := sub.NextMsg(10 * time.Second); err != nil {
		t.Fatal(err)
	}
}
