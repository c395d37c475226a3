package jetstream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// TestCLIEventAdvisories runs `nats event --js-advisory --js-metric`, which
// decodes each event with the nats-io schema types and renders it by type:
// an event it did not recognise would show as unknown. Every advisory
// jetwal sends must appear under its own title.
func TestCLIEventAdvisories(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "--server", c.url, "event", "--js-advisory", "--js-metric", "--no-srv-advisory")
	cmd.Env = removeEnv(append(os.Environ(), "HOME="+c.home, "XDG_CONFIG_HOME="+filepath.Join(c.home, ".config"),
		"NO_COLOR=1", "TERM=dumb"), "NATS_URL", "NATS_CONTEXT")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	eventually(t, "nats event to subscribe", func() bool {
		return strings.Contains(out.String(), "Listening for Metrics") && ts.srv.HasInterest("$JS.EVENT.METRIC.CONSUMER.ACK.X.Y")
	})

	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	consumerStream(t, js, njs.FileStorage, njs.StreamConfig{})
	publishN(t, js, "orders.new", 1, 3)
	cons, err := js.CreateOrUpdateConsumer(ctxT(t), "ORDERS", njs.ConsumerConfig{Durable: "W", AckPolicy: njs.AckExplicitPolicy,
		MaxDeliver: 2, AckWait: 200 * time.Millisecond, SampleFrequency: "100"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fetchAll(t, cons, 3, 5*time.Second)
	if len(msgs) != 3 {
		t.Fatalf("fetched %d of 3", len(msgs))
	}
	if err := msgs[0].DoubleAck(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := msgs[1].Nak(); err != nil {
		t.Fatal(err)
	}
	if err := msgs[2].TermWithReason("unparsable"); err != nil {
		t.Fatal(err)
	}
	// Message 2: delivered again after the nak, never acked, and set aside
	// past max_deliver when it comes due a third time.
	fetchAll(t, cons, 1, 5*time.Second)
	defer func() {
		if t.Failed() {
			t.Logf("nats event printed:\n%s", out.String())
		}
	}()
	eventually(t, "the max deliveries advisory", func() bool {
		fetchAll(t, cons, 1, 300*time.Millisecond)
		return strings.Contains(out.String(), "Delivery Attempts Exceeded")
	})
	if err := js.DeleteConsumer(ctxT(t), "ORDERS", "W"); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctxT(t), "ORDERS"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Stream Create Action", "Consumer Create Action", "JetStream API Access",
		"Acknowledgment Sample", "Delivery NAKed", "Delivery Terminated", "unparsable",
		"Delivery Attempts Exceeded", "Consumer Delete Action", "Stream Delete Action",
	}
	eventually(t, "every advisory rendered", func() bool {
		s := out.String()
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
	if s := out.String(); strings.Contains(strings.ToLower(s), "unknown") {
		t.Fatalf("nats event did not recognise an event:\n%s", s)
	}
}
