package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestKill9AdminOps kills `jetwal serve` with SIGKILL while it deletes a
// stream, purges it, or deletes a consumer, at seeded random moments, and
// checks what a restart finds: the stream whole (all its messages, its
// consumer's ack floor) or gone (for a delete), never a stream that came
// back empty with its sequences restarting at 1. Cycles:
// JETWAL_ADMIN_CYCLES (default 6; make hardening runs more).
func TestKill9AdminOps(t *testing.T) {
	cycles := envInt("JETWAL_ADMIN_CYCLES", 6)
	sd := seed(t)
	t.Logf("seed %d (replay: JETWAL_CRASH_SEED=%d), %d cycles", sd, sd, cycles)
	rng := rand.New(rand.NewPCG(sd, 5))
	ops := []string{"stream delete", "stream purge", "consumer delete"}
	for c := 0; c < cycles; c++ {
		op := ops[c%len(ops)]
		store := t.TempDir()
		port := freePort(t)
		p := startServer(t, store, port, "--sync=always")
		nc, err := nats.Connect(p.url, nats.NoReconnect(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		const msgs, acked = 400, 100
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "A", Subjects: []string{"a.>"}}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < msgs; i++ {
			if _, err := js.Publish(ctx, fmt.Sprintf("a.%d", i%4), make([]byte, 200)); err != nil {
				t.Fatal(err)
			}
		}
		cons, err := js.CreateOrUpdateConsumer(ctx, "A", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		batch, err := cons.Fetch(acked)
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// The operation, and a kill at a random moment around it.
		done := make(chan error, 1)
		go func() {
			switch op {
			case "stream delete":
				done <- js.DeleteStream(ctx, "A")
			case "stream purge":
				s, err := js.Stream(ctx, "A")
				if err == nil {
					err = s.Purge(ctx)
				}
				done <- err
			default:
				done <- js.DeleteConsumer(ctx, "A", "D")
			}
		}()
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		p.kill()
		opErr := <-done
		nc.Close()
		cancel()

		p = startServer(t, store, port, "--sync=always")
		nc, err = nats.Connect(p.url, nats.NoReconnect(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		js, _ = jetstream.New(nc)
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		s, err := js.Stream(ctx, "A")
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			if op != "stream delete" {
				t.Fatalf("cycle %d (%s): the stream is gone", c, op)
			}
		case err != nil:
			t.Fatalf("cycle %d (%s): %v\n%s", c, op, err, p.logs.String())
		default:
			info, err := s.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st := info.State
			purged := op == "stream purge" && st.Msgs == 0 && st.LastSeq == msgs
			if !purged && (st.Msgs != msgs || st.LastSeq != msgs) {
				t.Fatalf("cycle %d (%s, reply %v): stream came back with %d messages, last sequence %d; want %d and %d (or gone)",
					c, op, opErr, st.Msgs, st.LastSeq, msgs, msgs)
			}
			ci, err := s.Consumer(ctx, "D")
			switch {
			case errors.Is(err, jetstream.ErrConsumerNotFound):
				if op == "stream purge" {
					t.Fatalf("cycle %d (%s): the consumer is gone", c, op)
				}
			case err != nil:
				t.Fatal(err)
			default:
				cinfo, err := ci.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if cinfo.AckFloor.Stream < acked && !purged {
					t.Fatalf("cycle %d (%s): consumer ack floor %d below the %d confirmed acks", c, op, cinfo.AckFloor.Stream, acked)
				}
			}
		}
		cancel()
		nc.Close()
		p.stop(t)
	}
}
