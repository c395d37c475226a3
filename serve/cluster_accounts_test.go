package serve

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/server/auth"
)

// connectJS connects to s (as user, password pw, when user is not "").
func connectJS(t *testing.T, s *Server, user string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	var opts []nats.Option
	if user != "" {
		opts = append(opts, nats.UserInfo(user, "pw"))
	}
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// within runs f with a context of a few seconds.
func within(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return f(ctx)
}

// TestClusterListingsShowServingStates: STREAM.LIST and account info,
// answered by the meta leader, show every stream's state as the server
// serving it has it (the R3 stream's leader, each R1 stream's host), with
// its consumers, through a client on any server, and the account's
// storage as every replica holds it; the nats CLI's `stream ls` and
// `account info` agree.
func TestClusterListingsShowServingStates(t *testing.T) {
	servers := startCluster(t, 3)
	_, js := connectJS(t, servers[0], "")
	want := map[string]uint64{"R3S": 5, "ONE": 3, "TWO": 2}
	replicas := map[string]int{"R3S": 3, "ONE": 1, "TWO": 1}
	for _, name := range []string{"R3S", "ONE", "TWO"} {
		eventually(t, "create "+name, 60*time.Second, func() error {
			return within(func(ctx context.Context) error {
				_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, Replicas: replicas[name]})
				return err
			})
		})
		for i := range want[name] {
			eventually(t, "publish to "+name, 30*time.Second, func() error {
				return within(func(ctx context.Context) error {
					_, err := js.Publish(ctx, strings.ToLower(name)+".x", []byte("payload"), jetstream.WithMsgID(fmt.Sprint(i)))
					return err
				})
			})
		}
	}
	for _, name := range []string{"R3S", "ONE"} {
		eventually(t, "consumer on "+name, 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				_, err := js.CreateOrUpdateConsumer(ctx, name, jetstream.ConsumerConfig{Durable: "D"})
				return err
			})
		})
	}
	hosts := map[string]bool{}
	for _, s := range servers {
		_, js := connectJS(t, s, "")
		var bytes map[string]uint64
		eventually(t, "stream list through "+s.Core().Name(), 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				bytes = map[string]uint64{}
				l := js.ListStreams(ctx)
				for info := range l.Info() {
					n := info.Config.Name
					st := info.State
					wantCons := 0
					if n == "R3S" || n == "ONE" {
						wantCons = 1
					}
					if st.Msgs != want[n] || st.LastSeq != want[n] || st.FirstSeq != 1 || st.Bytes == 0 || st.Consumers != wantCons {
						return fmt.Errorf("%s: state %+v", n, st)
					}
					if info.Cluster == nil || info.Cluster.Leader == "" {
						return fmt.Errorf("%s: cluster %+v", n, info.Cluster)
					}
					if replicas[n] == 1 {
						hosts[info.Cluster.Leader] = true
					}
					bytes[n] = st.Bytes
				}
				if l.Err() != nil {
					return l.Err()
				}
				if len(bytes) != 3 {
					return fmt.Errorf("listed %v", bytes)
				}
				return nil
			})
		})
		eventually(t, "account info through "+s.Core().Name(), 30*time.Second, func() error {
			return within(func(ctx context.Context) error {
				ai, err := js.AccountInfo(ctx)
				if err != nil {
					return err
				}
				store := 3*bytes["R3S"] + bytes["ONE"] + bytes["TWO"]
				if ai.Streams != 3 || ai.Consumers != 2 || ai.Store != store {
					return fmt.Errorf("account info %+v, want store %d", ai, store)
				}
				return nil
			})
		})
		out, err := runCLI(t, s, "account", "info")
		if err != nil {
			t.Fatalf("nats account info: %v\n%s", err, out)
		}
		if !regexp.MustCompile(`Streams:\s+3\n`).MatchString(out) || !regexp.MustCompile(`Consumers:\s+2\n`).MatchString(out) {
			t.Fatalf("nats account info through %s:\n%s", s.Core().Name(), out)
		}
		out, err = runCLI(t, s, "stream", "ls")
		if err != nil {
			t.Fatalf("nats stream ls: %v\n%s", err, out)
		}
		for n, msgs := range want {
			row := regexp.MustCompile(`│\s*` + n + `\s*│.*│\s*` + fmt.Sprint(msgs) + `\s*│`)
			if !row.MatchString(out) {
				t.Fatalf("nats stream ls through %s: no row for %s with %d messages:\n%s", s.Core().Name(), n, msgs, out)
			}
		}
	}
	if len(hosts) != 2 {
		t.Fatalf("the R1 streams were placed on %v, want two servers", hosts)
	}
}

// startAccountsCluster starts three servers whose accounts A and B both
// have JetStream (A with limits: 2 streams, 3000 bytes of file storage);
// users a and b (password pw) log into them, and SYS is the system
// account.
func startAccountsCluster(t *testing.T) []*Server {
	t.Helper()
	return startClusterWith(t, 3, func(_ int, o *Options) {
		a, err := auth.New(auth.Options{Users: []auth.User{
			{Username: "a", Password: "pw", Account: "A"},
			{Username: "b", Password: "pw", Account: "B"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		o.Server.Auth = a
		o.Accounts = []config.Account{
			{Name: "A", JetStream: &config.AccountJetStream{MaxStreams: 2, MaxStore: 3000, MaxMemory: -1, MaxConsumers: -1, MaxAckPending: -1}},
			{Name: "B", JetStream: &config.AccountJetStream{MaxStreams: -1, MaxStore: -1, MaxMemory: -1, MaxConsumers: -1, MaxAckPending: -1}},
			{Name: "SYS"},
		}
		o.SystemAccount = "SYS"
	})
}

// TestClusterAccountsJetStream: two accounts with JetStream on a cluster
// each have an R3 stream of the same name, replicated apart; neither sees
// nor touches the other's (listing, info, publishing, deleting), and no
// client of either receives the cluster's internal traffic; account A's
// limits count its streams and the replicated reservations across the
// cluster (10027, 10047), and its stream survives a leader change.
func TestClusterAccountsJetStream(t *testing.T) {
	servers := startAccountsCluster(t)
	_, jsA := connectJS(t, servers[0], "a")
	ncB, jsB := connectJS(t, servers[1], "b")
	create := func(js jetstream.JetStream, cfg jetstream.StreamConfig) {
		t.Helper()
		eventually(t, "create "+cfg.Name, 60*time.Second, func() error {
			return within(func(ctx context.Context) error {
				_, err := js.CreateStream(ctx, cfg)
				return err
			})
		})
	}
	create(jsA, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
	create(jsB, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
	publish := func(js jetstream.JetStream, n int, id string) {
		t.Helper()
		for i := range n {
			eventually(t, "publish", 30*time.Second, func() error {
				return within(func(ctx context.Context) error {
					_, err := js.Publish(ctx, "orders.new", []byte("x"), jetstream.WithMsgID(fmt.Sprint(id, i)))
					return err
				})
			})
		}
	}
	publish(jsB, 1, "b")
	// From now on B listens to everything it can while A works.
	var mu sync.Mutex
	var seen []string
	sniff, err := ncB.Subscribe(">", func(m *nats.Msg) {
		mu.Lock()
		seen = append(seen, m.Subject)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	publish(jsA, 3, "a")
	state := func(js jetstream.JetStream) (jetstream.StreamState, error) {
		var st jetstream.StreamState
		err := within(func(ctx context.Context) error {
			s, err := js.Stream(ctx, "ORDERS")
			if err != nil {
				return err
			}
			info, err := s.Info(ctx)
			if err != nil {
				return err
			}
			st = info.State
			return nil
		})
		return st, err
	}
	check := func(what string, js jetstream.JetStream, msgs uint64) {
		t.Helper()
		eventually(t, what, 30*time.Second, func() error {
			st, err := state(js)
			if err == nil && st.Msgs != msgs {
				err = fmt.Errorf("%d messages, want %d", st.Msgs, msgs)
			}
			return err
		})
	}
	check("A's stream", jsA, 3)
	check("B's stream", jsB, 1)
	// B lists only its own stream and purging its own leaves A's alone.
	eventually(t, "B's names", 30*time.Second, func() error {
		return within(func(ctx context.Context) error {
			var names []string
			l := jsB.StreamNames(ctx)
			for n := range l.Name() {
				names = append(names, n)
			}
			ai, err := jsB.AccountInfo(ctx)
			if err != nil {
				return err
			}
			if len(names) != 1 || ai.Streams != 1 {
				return fmt.Errorf("B sees streams %v, account info %d streams", names, ai.Streams)
			}
			return l.Err()
		})
	})
	if err := within(func(ctx context.Context) error {
		s, err := jsB.Stream(ctx, "ORDERS")
		if err != nil {
			return err
		}
		return s.Purge(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	check("B's purged stream", jsB, 0)
	check("A's stream after B's purge", jsA, 3)
	// A's limits across the cluster: 2000 bytes times 3 replicas exceed
	// its 3000, 1000 times 3 do not; a third stream is one too many.
	err = within(func(ctx context.Context) error {
		_, err := jsA.CreateStream(ctx, jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big"}, Replicas: 3, MaxBytes: 2000})
		return err
	})
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10047 {
		t.Fatalf("R3 stream reserving 6000 of 3000 bytes: %v, want 10047", err)
	}
	create(jsA, jetstream.StreamConfig{Name: "FIT", Subjects: []string{"fit"}, Replicas: 3, MaxBytes: 1000})
	err = within(func(ctx context.Context) error {
		_, err := jsA.CreateStream(ctx, jetstream.StreamConfig{Name: "THIRD", Subjects: []string{"third"}, Replicas: 1})
		return err
	})
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10027 {
		t.Fatalf("third stream of an account allowed two: %v, want 10027", err)
	}
	// A's stream changes leader and keeps its messages; B's is untouched.
	retryCLI(t, servers[2], 30*time.Second, []string{"--user", "a", "--password", "pw", "stream", "cluster", "step-down", "ORDERS"})
	publish(jsA, 1, "after")
	check("A's stream after its step-down", jsA, 4)
	check("B's stream after A's step-down", jsB, 0)
	if err := within(func(ctx context.Context) error { return jsB.DeleteStream(ctx, "ORDERS") }); err != nil {
		t.Fatal(err)
	}
	check("A's stream after B deleted its own", jsA, 4)
	if err := ncB.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := sniff.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, subj := range seen {
		if strings.HasPrefix(subj, "$JWAL") || strings.HasPrefix(subj, "orders.") {
			t.Fatalf("a client of account B received %q", subj)
		}
	}
}
