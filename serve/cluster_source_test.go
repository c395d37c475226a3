package serve

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterMirrorAndSourceFailover: an R3 mirror and an R3 source of an
// R3 origin copy it across the cluster, a mirror made after a message of
// the origin was deleted keeps the origin's sequences (the gap replicated
// as a skip), and after every stream's leader steps down the copies go on
// from where they were: no gap, no repeat.
func TestClusterMirrorAndSourceFailover(t *testing.T) {
	servers := startCluster(t, 3)
	nc, js := connectJS(t, servers[0], "")
	create := func(cfg jetstream.StreamConfig) {
		t.Helper()
		eventually(t, "create "+cfg.Name, 60*time.Second, func() error {
			return within(func(ctx context.Context) error {
				_, err := js.CreateStream(ctx, cfg)
				return err
			})
		})
	}
	publish := func(from, to int) {
		t.Helper()
		for i := from; i <= to; i++ {
			eventually(t, "publish", 30*time.Second, func() error {
				return within(func(ctx context.Context) error {
					_, err := js.Publish(ctx, "o.x", []byte(strconv.Itoa(i)), jetstream.WithMsgID(strconv.Itoa(i)))
					return err
				})
			})
		}
	}
	state := func(name string, msgs, last uint64) {
		t.Helper()
		eventually(t, name+" state", 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				s, err := js.Stream(ctx, name)
				if err != nil {
					return err
				}
				info, err := s.Info(ctx)
				if err != nil {
					return err
				}
				if info.State.Msgs != msgs || info.State.LastSeq != last {
					return fmt.Errorf("%d messages up to %d, want %d up to %d", info.State.Msgs, info.State.LastSeq, msgs, last)
				}
				return nil
			})
		})
	}
	create(jetstream.StreamConfig{Name: "ORIGIN", Subjects: []string{"o.>"}, Replicas: 3})
	publish(1, 5)
	if err := within(func(ctx context.Context) error {
		s, err := js.Stream(ctx, "ORIGIN")
		if err != nil {
			return err
		}
		return s.DeleteMsg(ctx, 3)
	}); err != nil {
		t.Fatal(err)
	}
	create(jetstream.StreamConfig{Name: "MIR", Replicas: 3, Mirror: &jetstream.StreamSource{Name: "ORIGIN"}})
	create(jetstream.StreamConfig{Name: "SRC", Replicas: 3, Sources: []*jetstream.StreamSource{{Name: "ORIGIN"}}})
	state("MIR", 4, 5)
	state("SRC", 4, 4)
	stepDown := func(name string) {
		t.Helper()
		eventually(t, "step down "+name, 30*time.Second, func() error {
			m, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+name, nil, 5*time.Second)
			if err != nil {
				return err
			}
			if !strings.Contains(string(m.Data), `"success":true`) {
				return fmt.Errorf("%s", m.Data)
			}
			return nil
		})
	}
	for _, name := range []string{"MIR", "SRC", "ORIGIN"} {
		stepDown(name)
	}
	publish(6, 20)
	stepDown("MIR")
	stepDown("SRC")
	publish(21, 30)
	state("ORIGIN", 29, 30)
	state("MIR", 29, 30)
	state("SRC", 29, 29)
	// The source holds each origin message once, in order.
	if err := within(func(ctx context.Context) error {
		s, err := js.Stream(ctx, "SRC")
		if err != nil {
			return err
		}
		var got []string
		for seq := uint64(1); seq <= 29; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if err != nil {
				return fmt.Errorf("seq %d: %w", seq, err)
			}
			got = append(got, string(m.Data))
		}
		var want []string
		for i := 1; i <= 30; i++ {
			if i != 3 {
				want = append(want, strconv.Itoa(i))
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("source holds %v", got)
		}
		m, err := s.GetMsg(ctx, 29)
		if err != nil {
			return err
		}
		if h := m.Header.Get("Nats-Stream-Source"); !strings.HasPrefix(h, "ORIGIN 30 ") {
			return fmt.Errorf("last copy's Nats-Stream-Source %q", h)
		}
		mir, err := js.Stream(ctx, "MIR")
		if err != nil {
			return err
		}
		if _, err := mir.GetMsg(ctx, 3); err == nil {
			return fmt.Errorf("the mirror holds the origin's deleted message 3")
		}
		m, err = mir.GetMsg(ctx, 30)
		if err != nil || string(m.Data) != "30" {
			return fmt.Errorf("mirror message 30: %v %v", m, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
