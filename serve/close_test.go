package serve

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterShutdownWhileBusy: the three servers of a cluster shut down
// while clients are creating replicated streams and publishing to them;
// every Shutdown returns without error, and promptly. Before, each
// replica's close waited for its leadership watcher, which could be
// forwarding its fence to the meta leader (up to 2 s, one replica after
// another) or waiting for the meta group to apply it (for ever, when that
// Apply was itself closing the replica), and JetStream's close waited up
// to 3 s for a stream create's answer: this took 2.7 to 3 s (20 to 150 ms
// now, with -race on a loaded machine).
func TestClusterShutdownWhileBusy(t *testing.T) {
	servers := startCluster(t, 3)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	created := make(chan struct{}, 64)
	for i, s := range servers {
		nc, err := nats.Connect(s.ClientURL(), nats.NoReconnect())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				name := fmt.Sprintf("S%d_%d", i, n)
				_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Replicas: 3})
				if err == nil {
					select {
					case created <- struct{}{}:
					default:
					}
					for k := 0; k < 20; k++ {
						_, _ = js.PublishAsync(name+".x", []byte("m"))
					}
				}
				cancel()
				if errors.Is(err, nats.ErrConnectionClosed) {
					return
				}
			}
		}()
	}
	// Shut down once some streams exist and more are being made.
	for range 2 {
		select {
		case <-created:
		case <-time.After(60 * time.Second):
			t.Fatal("no stream was created")
		}
	}
	start := time.Now()
	errs := make(chan error, len(servers))
	for _, s := range servers {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			errs <- s.Shutdown(ctx)
		}()
	}
	deadline := time.After(45 * time.Second)
	for range servers {
		select {
		case err := <-errs:
			if err != nil {
				t.Error(err)
			}
		case <-deadline:
			buf := make([]byte, 8<<20)
			t.Fatalf("shutdown did not finish in 45 s; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("three servers shut down in %v", time.Since(start))
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("shutdown took %v; a raft group's close should not wait for its peers", d)
	}
}
