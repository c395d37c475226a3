package serve

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterDirectGetByEveryReplica: an R3 stream with allow_direct has
// its direct gets served by all three replicas, each subscribed in the
// queue group _sys_ (as the routes announce them), and a client on any
// server gets the right messages; a replica left alone, cut off from its
// leader, stops answering instead of serving what may be stale.
func TestClusterDirectGetByEveryReplica(t *testing.T) {
	servers := startCluster(t, 3)
	_, js := connectJS(t, servers[0], "")
	eventually(t, "create", 60*time.Second, func() error {
		return within(func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "D", Subjects: []string{"d.>"}, Replicas: 3, AllowDirect: true})
			return err
		})
	})
	for i := range 10 {
		eventually(t, "publish", 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				_, err := js.Publish(ctx, fmt.Sprintf("d.%d", i%3), []byte(fmt.Sprint(i)), jetstream.WithMsgID(fmt.Sprint(i)))
				return err
			})
		})
	}
	// Every server's queue subscription reaches the others.
	eventually(t, "every replica subscribed", 30*time.Second, func() error {
		for _, s := range servers {
			for _, o := range servers {
				if o == s {
					continue
				}
				found := false
				for _, r := range o.Core().Routes() {
					if r.RemoteName == s.Core().Name() && slices.Contains(r.Subs, "$JS.API.DIRECT.GET.D _sys_") &&
						slices.Contains(r.Subs, "$JS.API.DIRECT.GET.D.> _sys_") {
						found = true
					}
				}
				if !found {
					return fmt.Errorf("%s does not see %s answering direct gets", o.Core().Name(), s.Core().Name())
				}
			}
		}
		return nil
	})
	for _, s := range servers {
		_, js := connectJS(t, s, "")
		eventually(t, "direct gets through "+s.Core().Name(), 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				st, err := js.Stream(ctx, "D")
				if err != nil {
					return err
				}
				for seq := uint64(1); seq <= 10; seq++ {
					m, err := st.GetMsg(ctx, seq)
					if err != nil {
						return fmt.Errorf("seq %d: %w", seq, err)
					}
					if string(m.Data) != fmt.Sprint(seq-1) || m.Sequence != seq {
						return fmt.Errorf("seq %d: got %d %q", seq, m.Sequence, m.Data)
					}
				}
				m, err := st.GetLastMsgForSubject(ctx, "d.0")
				if err != nil || string(m.Data) != "9" {
					return fmt.Errorf("last for d.0: %v %v", m, err)
				}
				return nil
			})
		})
	}
	// Alone, the last server loses its leader and stops answering.
	last := servers[2]
	_, js3 := connectJS(t, last, "")
	st, err := func() (jetstream.Stream, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return js3.Stream(ctx, "D")
	}()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers[:2] {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	eventually(t, "the lone replica stops answering", 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if m, err := st.GetMsg(ctx, 1); err == nil {
			return fmt.Errorf("still answered with %q", m.Data)
		}
		return nil
	})
}
