package jetstream

import (
	"strings"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// TestStreamConsumerLimits checks a stream's consumer_limits through
// nats.go, as nats-server 2.15.2 answers: they are every consumer's
// defaults, a consumer above them is refused (in nats-server's order and
// words), and a stream update that existing consumers exceed is refused
// naming them.
func TestStreamConsumerLimits(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	limits := njs.StreamConsumerLimits{InactiveThreshold: time.Minute, MaxAckPending: 100}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}, ConsumerLimits: limits})
	if got := s.CachedInfo().Config.ConsumerLimits; got != limits {
		t.Fatalf("stream consumer_limits %+v", got)
	}

	// Defaults, for durables, ephemerals and ack_policy none alike.
	for _, cfg := range []njs.ConsumerConfig{
		{Durable: "d", AckPolicy: njs.AckExplicitPolicy},
		{Durable: "n", AckPolicy: njs.AckNonePolicy},
		{AckPolicy: njs.AckExplicitPolicy},
	} {
		c, err := s.CreateConsumer(ctxT(t), cfg)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		got := c.CachedInfo().Config
		if got.InactiveThreshold != time.Minute || got.MaxAckPending != 100 {
			t.Errorf("consumer %q: inactive_threshold %v max_ack_pending %d, want 1m 100", cfg.Durable, got.InactiveThreshold, got.MaxAckPending)
		}
	}

	refused := []struct {
		cfg  njs.ConsumerConfig
		code njs.ErrorCode
		text string
	}{
		// The limit becomes its max_ack_pending, which ack_policy none
		// cannot have on a push consumer.
		{njs.ConsumerConfig{Durable: "pn", AckPolicy: njs.AckNonePolicy, DeliverSubject: "out.pn"}, 10082, "consumer requires ack policy for max ack pending"},
		{njs.ConsumerConfig{Durable: "big", AckPolicy: njs.AckExplicitPolicy, MaxAckPending: 101}, 10121, "consumer max ack pending exceeds system limit of 100"},
		{njs.ConsumerConfig{Durable: "long", AckPolicy: njs.AckExplicitPolicy, InactiveThreshold: 61 * time.Second}, 10153, "consumer inactive threshold exceeds system limit of 1m0s"},
		// Max ack pending is checked first.
		{njs.ConsumerConfig{Durable: "both", AckPolicy: njs.AckExplicitPolicy, InactiveThreshold: 61 * time.Second, MaxAckPending: 101}, 10121, "max ack pending"},
	}
	for _, c := range refused {
		_, err := s.CreateConsumer(ctxT(t), c.cfg)
		if apiCode(err) != c.code || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %d %q", c.cfg.Durable, err, c.code, c.text)
		}
	}
	// -1 (no limit) is not above the limit.
	if _, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "unl", AckPolicy: njs.AckExplicitPolicy,
		MaxAckPending: -1, InactiveThreshold: time.Second}); err != nil {
		t.Fatalf("max_ack_pending -1: %v", err)
	}

	// Tighter limits that d, n and the ephemeral exceed are refused.
	_, err = js.UpdateStream(ctxT(t), njs.StreamConfig{Name: "S", Subjects: []string{"s.*"},
		ConsumerLimits: njs.StreamConsumerLimits{InactiveThreshold: 30 * time.Second, MaxAckPending: 50}})
	if apiCode(err) != 10069 || !strings.Contains(err.Error(), "change to limits violates consumers: ") ||
		!strings.Contains(err.Error(), "d, ") || strings.Contains(err.Error(), "unl") {
		t.Fatalf("tighter limits: %v", err)
	}
	// Dropping the limits is fine.
	info, err := js.UpdateStream(ctxT(t), njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	if err != nil || info.CachedInfo().Config.ConsumerLimits != (njs.StreamConsumerLimits{}) {
		t.Fatalf("limits dropped: %+v %v", info, err)
	}
}
