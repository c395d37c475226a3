package serve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterDirectGetByLeader: an R3 stream with allow_direct has its
// direct gets served by its leader alone, subscribed in nats-server's
// queue group _sys_ (as the routes announce it); a client on any server
// gets the right messages, including one read right after its publish was
// acknowledged; after a step-down the new leader answers and the old one
// no longer does.
func TestClusterDirectGetByLeader(t *testing.T) {
	servers := startCluster(t, 3)
	nc0, js := connectJS(t, servers[0], "")
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
	// answering lists the servers whose direct get subscriptions the
	// others see over their routes.
	answering := func() []string {
		var out []string
		for _, s := range servers {
			seen := 0
			for _, o := range servers {
				if o == s {
					continue
				}
				for _, r := range o.Core().Routes() {
					if r.RemoteName == s.Core().Name() && slices.Contains(r.Subs, "$JS.API.DIRECT.GET.D _sys_") &&
						slices.Contains(r.Subs, "$JS.API.DIRECT.GET.D.> _sys_") {
						seen++
					}
				}
			}
			if seen == len(servers)-1 {
				out = append(out, s.Core().Name())
			}
		}
		return out
	}
	leader := func() (string, error) {
		var name string
		err := within(func(ctx context.Context) error {
			st, err := js.Stream(ctx, "D")
			if err != nil {
				return err
			}
			info, err := st.Info(ctx)
			if err != nil {
				return err
			}
			if info.Cluster == nil || info.Cluster.Leader == "" {
				return fmt.Errorf("no leader")
			}
			name = info.Cluster.Leader
			return nil
		})
		return name, err
	}
	onlyLeaderAnswers := func() {
		eventually(t, "only the leader subscribed", 30*time.Second, func() error {
			l, err := leader()
			if err != nil {
				return err
			}
			if got := answering(); !slices.Equal(got, []string{l}) {
				return fmt.Errorf("answering %v, leader %s", got, l)
			}
			return nil
		})
	}
	onlyLeaderAnswers()
	for n, s := range servers {
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
				// Read right after an acknowledged publish: the leader
				// has applied it.
				body := fmt.Sprint("fresh-", n)
				if _, err := js.Publish(ctx, "d.fresh", []byte(body)); err != nil {
					return err
				}
				m, err = st.GetLastMsgForSubject(ctx, "d.fresh")
				if err != nil || string(m.Data) != body {
					return fmt.Errorf("read after write: %v %v", m, err)
				}
				return nil
			})
		})
	}
	// A step-down moves the answering to the new leader.
	old, err := leader()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "step-down", 30*time.Second, func() error {
		return within(func(ctx context.Context) error {
			m, err := nc0.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN.D", nil)
			if err != nil {
				return err
			}
			if !strings.Contains(string(m.Data), `"success":true`) {
				return fmt.Errorf("step-down: %s", m.Data)
			}
			return nil
		})
	})
	eventually(t, "a new leader", 30*time.Second, func() error {
		l, err := leader()
		if err == nil && l == old {
			return fmt.Errorf("still led by %s", old)
		}
		return err
	})
	onlyLeaderAnswers()
}

// TestClusterInternalRequestsUnreachable: the servers' requests to each
// other (stream states, an origin's messages, a restore's writes) live in
// the internal account: a client that listens to their subjects hears
// nothing while a listing makes the servers ask, and one that sends a
// write request in their form gets no answer and changes nothing.
func TestClusterInternalRequestsUnreachable(t *testing.T) {
	servers := startCluster(t, 3)
	nc, js := connectJS(t, servers[1], "")
	eventually(t, "create", 60*time.Second, func() error {
		return within(func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Replicas: 3})
			return err
		})
	})
	var heard []string
	var mu sync.Mutex
	for _, subj := range []string{"$JWAL.>", "_JWAL_INBOX.>"} {
		if _, err := nc.Subscribe(subj, func(m *nats.Msg) {
			mu.Lock()
			heard = append(heard, m.Subject)
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// $G's requests: "$JWAL.JS." + hex("$G") + ".<what>".
	write := `{"stream":"S","msgs":[{"Seq":1,"Time":1,"Subject":"s.x","Data":"eA=="}]}`
	for _, what := range []string{"WRITE", "STATE", "READ"} {
		if m, err := nc.Request("$JWAL.JS.2447."+what, []byte(write), 500*time.Millisecond); err == nil {
			t.Fatalf("%s request answered: %q", what, m.Data)
		}
	}
	eventually(t, "list", 30*time.Second, func() error {
		return within(func(ctx context.Context) error {
			n := 0
			l := js.ListStreams(ctx)
			for range l.Info() {
				n++
			}
			if n != 1 {
				return fmt.Errorf("listed %d streams", n)
			}
			return l.Err()
		})
	})
	if err := within(func(ctx context.Context) error {
		s, err := js.Stream(ctx, "S")
		if err != nil {
			return err
		}
		if st := s.CachedInfo().State; st.Msgs != 0 || st.LastSeq != 0 {
			return fmt.Errorf("a client's write request reached the stream: %+v", st)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, subj := range heard {
		if !strings.HasPrefix(subj, "$JWAL.JS.2447.") { // its own requests
			t.Fatalf("a client heard the cluster's %q", subj)
		}
	}
}
