package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterRestore: `nats stream backup` of an R3 stream with deleted
// messages (one inside, one at its end) and a durable consumer, the
// stream deleted, and `nats stream restore` through another server: the
// stream is back with three replicas, and each of them, made leader in
// turn, holds the messages at their sequences with their times, the gaps,
// and the consumer where it was.
func TestClusterRestore(t *testing.T) {
	servers := startCluster(t, 3)
	nc, js := connectJS(t, servers[0], "")
	eventually(t, "create", 60*time.Second, func() error {
		return within(func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SRC", Subjects: []string{"src.>"}, Replicas: 3})
			return err
		})
	})
	for i := 1; i <= 20; i++ {
		eventually(t, "publish", 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				_, err := js.Publish(ctx, "src."+strconv.Itoa(i%4), []byte(strconv.Itoa(i)), jetstream.WithMsgID(strconv.Itoa(i)))
				return err
			})
		})
	}
	var firstTime time.Time
	if err := within(func(ctx context.Context) error {
		s, err := js.Stream(ctx, "SRC")
		if err != nil {
			return err
		}
		for _, seq := range []uint64{5, 20} {
			if err := s.DeleteMsg(ctx, seq); err != nil {
				return err
			}
		}
		m, err := s.GetMsg(ctx, 1)
		if err != nil {
			return err
		}
		firstTime = m.Time
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A durable consumer that has had 3 messages acked.
	eventually(t, "consumer", 30*time.Second, func() error {
		return within(func(ctx context.Context) error {
			c, err := js.CreateOrUpdateConsumer(ctx, "SRC", jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
			if err != nil {
				return err
			}
			batch, err := c.Fetch(3, jetstream.FetchMaxWait(3*time.Second))
			if err != nil {
				return err
			}
			n := 0
			for m := range batch.Messages() {
				if err := m.DoubleAck(ctx); err != nil {
					return err
				}
				n++
			}
			if n != 3 {
				return fmt.Errorf("fetched %d", n)
			}
			return nil
		})
	})
	dir := filepath.Join(t.TempDir(), "backup")
	if out, err := runCLI(t, servers[0], "stream", "backup", "SRC", dir, "--consumers", "--no-progress"); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if err := within(func(ctx context.Context) error { return js.DeleteStream(ctx, "SRC") }); err != nil {
		t.Fatal(err)
	}
	retryCLI(t, servers[1], 60*time.Second, []string{"stream", "restore", dir, "--no-progress"})
	for _, s := range servers {
		name := s.Core().Name()
		eventually(t, "leader "+name, 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				st, err := js.Stream(ctx, "SRC")
				if err != nil {
					return err
				}
				info := st.CachedInfo()
				if info.Config.Replicas != 3 || info.Cluster == nil {
					return fmt.Errorf("restored %+v cluster %+v", info.Config, info.Cluster)
				}
				if info.Cluster.Leader != name {
					body, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": name}})
					if _, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN.SRC", body); err != nil {
						return err
					}
					return fmt.Errorf("leader %s, not yet %s", info.Cluster.Leader, name)
				}
				if info.State.Msgs != 18 || info.State.FirstSeq != 1 || info.State.LastSeq != 20 || len(info.Cluster.Replicas) != 2 {
					return fmt.Errorf("on %s: state %+v", name, info.State)
				}
				m, err := st.GetMsg(ctx, 1)
				if err != nil || string(m.Data) != "1" || !m.Time.Equal(firstTime) {
					return fmt.Errorf("on %s: message 1 %v at %v (was at %v): %v", name, m, m.Time, firstTime, err)
				}
				m, err = st.GetMsg(ctx, 19)
				if err != nil || string(m.Data) != "19" || m.Subject != "src.3" {
					return fmt.Errorf("on %s: message 19: %v %v", name, m, err)
				}
				if _, err := st.GetMsg(ctx, 5); err == nil {
					return fmt.Errorf("on %s: deleted message 5 restored", name)
				}
				c, err := st.Consumer(ctx, "C")
				if err != nil {
					return fmt.Errorf("on %s: consumer C: %w", name, err)
				}
				ci := c.CachedInfo()
				if ci.AckFloor.Stream != 3 || ci.Delivered.Stream != 3 || ci.NumPending != 15 {
					return fmt.Errorf("on %s: consumer C restored at ack floor %d, delivered %d, pending %d", name, ci.AckFloor.Stream, ci.Delivered.Stream, ci.NumPending)
				}
				return nil
			})
		})
	}
}
