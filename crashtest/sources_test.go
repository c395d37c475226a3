package crashtest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestKill9MirrorAndSource: a server with a stream, a mirror of it and a
// stream sourcing it is killed (SIGKILL) while the origin takes publishes,
// twice. After each restart, once the feeds catch up, the mirror holds
// every origin message at the origin's sequence and the sourcing stream
// holds every origin message exactly once.
func TestKill9MirrorAndSource(t *testing.T) {
	store := t.TempDir()
	port := freePort(t)
	p := startServer(t, store, port, "--sync=always")
	for cycle := 0; cycle < 2; cycle++ {
		nc, err := nats.Connect(p.url, nats.NoReconnect(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if cycle == 0 {
			for _, cfg := range []jetstream.StreamConfig{
				{Name: "O", Subjects: []string{"o.>"}},
				{Name: "M", Mirror: &jetstream.StreamSource{Name: "O"}},
				{Name: "S", Sources: []*jetstream.StreamSource{{Name: "O"}}},
			} {
				if _, err := js.CreateStream(ctx, cfg); err != nil {
					t.Fatal(err)
				}
			}
		}
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; !stop.Load(); i++ {
				if _, err := js.Publish(ctx, fmt.Sprintf("o.%d", i%5), []byte(fmt.Sprintf("c%d-%d", cycle, i))); err != nil {
					return
				}
			}
		}()
		time.Sleep(700 * time.Millisecond)
		p.kill()
		stop.Store(true)
		<-done
		cancel()
		nc.Close()
		t.Logf("cycle %d: killed", cycle)

		p = startServer(t, store, port, "--sync=always")
		nc, err = nats.Connect(p.url, nats.NoReconnect(), quiet)
		if err != nil {
			t.Fatal(err)
		}
		js, _ = jetstream.New(nc)
		ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
		o, err := js.Stream(ctx, "O")
		if err != nil {
			t.Fatal(err)
		}
		oi, _ := o.Info(ctx)
		want := oi.State
		m, _ := js.Stream(ctx, "M")
		s, _ := js.Stream(ctx, "S")
		deadline := time.Now().Add(30 * time.Second)
		for {
			mi, err1 := m.Info(ctx)
			si, err2 := s.Info(ctx)
			if err1 == nil && err2 == nil && mi.State.LastSeq == want.LastSeq && si.State.Msgs >= want.Msgs {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cycle %d: feeds did not catch up: origin %+v, mirror %+v %v, source %+v %v", cycle, want, mi.State, err1, si.State, err2)
			}
			time.Sleep(50 * time.Millisecond)
		}
		si, _ := s.Info(ctx)
		if si.State.Msgs != want.Msgs {
			t.Fatalf("cycle %d: the sourcing stream holds %d messages, the origin %d", cycle, si.State.Msgs, want.Msgs)
		}
		seen := map[string]bool{}
		for seq := uint64(1); seq <= si.State.LastSeq; seq++ {
			sm, err := s.GetMsg(ctx, seq)
			if err != nil {
				continue
			}
			h := sm.Header.Get("Nats-Stream-Source")
			if seen[h] {
				t.Fatalf("cycle %d: origin message sourced twice: %s", cycle, h)
			}
			seen[h] = true
		}
		for seq := want.FirstSeq; seq <= want.LastSeq; seq++ {
			om, oerr := o.GetMsg(ctx, seq)
			mm, merr := m.GetMsg(ctx, seq)
			if (oerr == nil) != (merr == nil) || (oerr == nil && string(om.Data) != string(mm.Data)) {
				t.Fatalf("cycle %d: sequence %d differs: origin %v, mirror %v", cycle, seq, oerr, merr)
			}
		}
		t.Logf("cycle %d: origin %d messages, mirror and source agree", cycle, want.Msgs)
		cancel()
		nc.Close()
	}
}
