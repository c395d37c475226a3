package crashtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestKill9AtomicBatch kills `jetwal serve` with SIGKILL while a client
// publishes atomic batches (allow_atomic) of 120 messages of 3 KiB, each
// larger than the store's write buffer so a commit is written in pieces,
// at seeded random moments, every other cycle just after a commit was
// sent. After a restart every batch is in the stream
// whole or not at all, and every batch whose commit was acknowledged is
// there. Cycles: JETWAL_BATCH_CYCLES (default 4).
func TestKill9AtomicBatch(t *testing.T) {
	cycles := envInt("JETWAL_BATCH_CYCLES", 4)
	sd := seed(t)
	t.Logf("seed %d (replay: JETWAL_CRASH_SEED=%d), %d cycles", sd, sd, cycles)
	rng := rand.New(rand.NewPCG(sd, 7))
	const size = 120
	for c := range cycles {
		store := t.TempDir()
		port := freePort(t)
		p := startServer(t, store, port, "--sync=always")
		nc, err := nats.Connect(p.url, nats.NoReconnect(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		acked := map[string]bool{}
		stop := make(chan struct{})
		done := make(chan struct{})
		// Every other cycle the kill aims at a commit: it comes a few
		// hundred microseconds after the commit of batch target is sent.
		target := -1
		if c%2 == 1 {
			target = 2 + rng.IntN(8)
		}
		commitSent := make(chan struct{})
		go func() {
			defer close(done)
			for b := 0; ; b++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("c%d-b%d", c, b)
				for i := 1; i <= size; i++ {
					m := nats.NewMsg(fmt.Sprintf("b.%d", i%5))
					m.Header.Set("Nats-Batch-Id", id)
					m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i))
					if i == size {
						m.Header.Set("Nats-Batch-Commit", "1")
					}
					m.Data = make([]byte, 3<<10)
					if b == target && i == size {
						close(commitSent)
					}
					r, err := nc.RequestMsg(m, 10*time.Second)
					if err != nil {
						return // the server is gone
					}
					if i == size {
						var ack struct {
							Count int `json:"count"`
						}
						if json.Unmarshal(r.Data, &ack) == nil && ack.Count == size {
							mu.Lock()
							acked[id] = true
							mu.Unlock()
						}
					}
				}
			}
		}()
		if target >= 0 {
			<-commitSent
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		} else {
			time.Sleep(time.Duration(100+rng.IntN(900)) * time.Millisecond)
		}
		p.kill()
		close(stop)
		<-done
		nc.Close()
		cancel()

		p = startServer(t, store, port, "--sync=always")
		nc, err = nats.Connect(p.url, nats.NoReconnect(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		js, _ = jetstream.New(nc)
		ctx, cancel = context.WithTimeout(context.Background(), 120*time.Second)
		s, err := js.Stream(ctx, "B")
		if err != nil {
			t.Fatalf("cycle %d: %v\n%s", c, err, p.logs.String())
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				t.Fatalf("cycle %d: get %d: %v", c, seq, err)
			}
			counts[m.Header.Get("Nats-Batch-Id")]++
		}
		for id, n := range counts {
			if n != size {
				t.Fatalf("cycle %d: batch %s came back with %d of its %d messages", c, id, n, size)
			}
		}
		mu.Lock()
		for id := range acked {
			if counts[id] != size {
				t.Fatalf("cycle %d: acknowledged batch %s lost (%d messages)", c, id, counts[id])
			}
		}
		t.Logf("cycle %d: %d batches stored, %d acknowledged", c, len(counts), len(acked))
		mu.Unlock()
		cancel()
		nc.Close()
		p.stop(t)
	}
}
