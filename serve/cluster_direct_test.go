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

// TestClusterDirectGetByEveryReplica: an R3 stream with allow_direct has
// its direct gets served by all three replicas, each subscribed in
// nats-server's queue group _sys_ (as the routes announce them); a client
// on any server gets the right messages. A get sent right after a publish
// was acknowledged, through a client on a follower's server, is answered
// by that follower (its answer counts go up) and sees the publish in
// nearly every try: the leader makes the commit known to the followers as
// its writes drain (cluster/followerreads.go). After a step-down every
// replica answers again, the new leader included.
func TestClusterDirectGetByEveryReplica(t *testing.T) {
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
	everyReplicaAnswers := func() {
		eventually(t, "every replica subscribed", 30*time.Second, func() error {
			if got := directAnswering(servers, "D"); len(got) != len(servers) {
				return fmt.Errorf("answering: %v", got)
			}
			return nil
		})
	}
	everyReplicaAnswers()
	leader, err := streamLeader(js, "D")
	if err != nil {
		t.Fatal(err)
	}
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
	// Reads right after an acknowledged publish, readAfterWriteTries
	// through each server: the queue group picks any replica, so the
	// followers answer about two thirds of them.
	before := directAnswers(servers)
	stale := 0
	for n, s := range servers {
		_, js := connectJS(t, s, "")
		k := readAfterWrite(t, js, fmt.Sprint("fresh-", n))
		t.Logf("through %s: %d of %d gets stale", s.Core().Name(), k, readAfterWriteTries)
		stale += k
	}
	// How many miss depends on the machine's load (0 to 3 of 180 on a
	// quiet one, 20 with make test's packages beside it); broken commit
	// notices would leave every follower's answer stale (about two
	// thirds), so the bound is half. Each stale get saw its write soon
	// after (readAfterWrite).
	if total := len(servers) * readAfterWriteTries; stale*2 > total {
		t.Errorf("%d of %d gets right after the publish's ack missed it (at most half allowed)", stale, total)
	}
	after := directAnswers(servers)
	for i, s := range servers {
		byLeader, byFollower := after[i][0]-before[i][0], after[i][1]-before[i][1]
		t.Logf("%s (leader: %v) answered %d gets as the leader, %d as a follower", s.Core().Name(), s.Core().Name() == leader, byLeader, byFollower)
		if s.Core().Name() != leader && byFollower < readAfterWriteTries/4 {
			t.Errorf("%s, a follower, answered %d of the %d gets", s.Core().Name(), byFollower, len(servers)*readAfterWriteTries)
		}
	}
	// A step-down: every replica still answers, the new leader included.
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
		l, err := streamLeader(js, "D")
		if err == nil && l == leader {
			return fmt.Errorf("still led by %s", leader)
		}
		return err
	})
	everyReplicaAnswers()
}

// TestClusterDirectGetFollowerCatchingUp: a follower's server stopped
// while 5,000 messages were published, then restarted: a client on that
// server asking for the last message over and over, from the moment the
// server's routes are back, always gets it, and the restarted follower
// answers once it has caught up. (Catching up 5,000 messages takes less
// than the 250 ms in which a follower joins the queue group, so this is
// the end to end check; cluster.TestFollowerCurrent samples Current
// itself while a follower catches up, and fails without its rules.)
func TestClusterDirectGetFollowerCatchingUp(t *testing.T) {
	servers := startCluster(t, 3)
	_, js := connectJS(t, servers[0], "")
	eventually(t, "create", 60*time.Second, func() error {
		return within(func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "D", Subjects: []string{"d.>"}, Replicas: 3, AllowDirect: true})
			return err
		})
	})
	eventually(t, "every replica subscribed", 30*time.Second, func() error {
		if got := directAnswering(servers, "D"); len(got) != len(servers) {
			return fmt.Errorf("answering: %v", got)
		}
		return nil
	})
	leader, err := streamLeader(js, "D")
	if err != nil {
		t.Fatal(err)
	}
	f := slices.IndexFunc(servers, func(s *Server) bool { return s.Core().Name() != leader })
	var rest []*Server
	for i, s := range servers {
		if i != f {
			rest = append(rest, s)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := servers[f].Options()
	if err := servers[f].Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// Published through a server that stays, in windows of 500.
	_, jsRest := connectJS(t, rest[0], "")
	const msgs = 5000
	var last uint64
	for i := 0; i < msgs; i += 500 {
		var acks []jetstream.PubAckFuture
		for j := i; j < i+500; j++ {
			a, err := jsRest.PublishAsync(fmt.Sprintf("d.%d", j%10), []byte(fmt.Sprint("m", j)))
			if err != nil {
				t.Fatal(err)
			}
			acks = append(acks, a)
		}
		for _, a := range acks {
			select {
			case ack := <-a.Ok():
				last = max(last, ack.Sequence)
			case err := <-a.Err():
				t.Fatal(err)
			case <-ctx.Done():
				t.Fatal("publishing: timed out")
			}
		}
	}
	back, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = back.Shutdown(ctx)
	})
	// Raw direct gets, from the moment the server is back and its routes
	// carry the other replicas' subscriptions (no stream info first):
	// {"seq": last}, answered with the message's headers.
	eventually(t, "the restarted server's routes", 30*time.Second, func() error {
		for _, r := range back.Core().Routes() {
			if slices.Contains(r.Subs, "$JS.API.DIRECT.GET.D _sys_") {
				return nil
			}
		}
		return fmt.Errorf("no route carries the direct get subscriptions")
	})
	ncBack, _ := connectJS(t, back, "")
	req := []byte(fmt.Sprintf(`{"seq":%d}`, last))
	start, gets := time.Now(), 0
	for {
		_, byFollower := back.jss[0].DirectAnswered()
		if byFollower >= 20 {
			break
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("the restarted follower answered %d of %d gets in 60 s", byFollower, gets)
		}
		gets++
		m, err := ncBack.Request("$JS.API.DIRECT.GET.D", req, 5*time.Second)
		if err == nil && (m.Header.Get("Nats-Sequence") != fmt.Sprint(last) || string(m.Data) != fmt.Sprint("m", msgs-1)) {
			err = fmt.Errorf("got status %q sequence %q data %q", m.Header.Get("Status"), m.Header.Get("Nats-Sequence"), m.Data)
		}
		if err != nil {
			_, byFollower := back.jss[0].DirectAnswered()
			t.Fatalf("get %d of the last message (seq %d), %v after the restart (the restarted follower had answered %d): %v",
				gets, last, time.Since(start), byFollower, err)
		}
	}
	t.Logf("the restarted follower answered from %v after its restart; %d gets, all with the last message", time.Since(start), gets)
}

const (
	// readAfterWriteTries are the publishes, each followed by a direct
	// get, that a read-after-write check makes through one server.
	readAfterWriteTries = 60
)

// readAfterWrite publishes readAfterWriteTries messages to d.fresh through
// js, each followed by a direct get of d.fresh's last message, and returns
// how many gets did not return the message just published; each of those
// must return it within 5 s.
func readAfterWrite(t *testing.T, js jetstream.JetStream, prefix string) (stale int) {
	t.Helper()
	var st jetstream.Stream
	eventually(t, "stream", 30*time.Second, func() error {
		return within(func(ctx context.Context) (err error) {
			st, err = js.Stream(ctx, "D")
			return err
		})
	})
	for i := range readAfterWriteTries {
		body := fmt.Sprint(prefix, "-", i)
		if err := within(func(ctx context.Context) error {
			_, err := js.Publish(ctx, "d.fresh", []byte(body))
			return err
		}); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		get := func() error {
			return within(func(ctx context.Context) error {
				m, err := st.GetLastMsgForSubject(ctx, "d.fresh")
				if err != nil {
					return err
				}
				if string(m.Data) != body {
					return fmt.Errorf("got %q", m.Data)
				}
				return nil
			})
		}
		if get() != nil {
			stale++
			// A stale answer is a moment behind, never wrong for long.
			eventually(t, "get "+body+" after a stale answer", 5*time.Second, get)
		}
	}
	return stale
}

// directAnswers returns each server's count of direct gets answered as
// a stream's leader and as a follower.
func directAnswers(servers []*Server) [][2]uint64 {
	out := make([][2]uint64, len(servers))
	for i, s := range servers {
		out[i][0], out[i][1] = s.jss[0].DirectAnswered()
	}
	return out
}

// directAnswering lists the servers whose direct get subscriptions of
// stream (in the queue group _sys_) the others see over their routes.
func directAnswering(servers []*Server, stream string) []string {
	var out []string
	for _, s := range servers {
		seen := 0
		for _, o := range servers {
			if o == s {
				continue
			}
			for _, r := range o.Core().Routes() {
				if r.RemoteName == s.Core().Name() && slices.Contains(r.Subs, "$JS.API.DIRECT.GET."+stream+" _sys_") &&
					slices.Contains(r.Subs, "$JS.API.DIRECT.GET."+stream+".> _sys_") {
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

// streamLeader returns the name of the stream's leader, as its info says.
func streamLeader(js jetstream.JetStream, stream string) (string, error) {
	var name string
	err := within(func(ctx context.Context) error {
		st, err := js.Stream(ctx, stream)
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
