package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// startSecuredJSCluster starts n servers of one clustered JetStream from
// configuration files: routes need credentials (cluster authorization,
// the route URLs carry them), and clients log in as "app", whose
// permissions deny deleting streams, or "admin".
func startSecuredJSCluster(t *testing.T, n int) []*member {
	t.Helper()
	ports := freePorts(t, n)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://route:route-pass@127.0.0.1:%d", p))
	}
	ms := make([]*member, n)
	for i := range ms {
		conf := writeConf(t, fmt.Sprintf(`
authorization {
  users: [
    { user: app, password: app-pass, permissions: { publish: { deny: "$JS.API.STREAM.DELETE.>" } } }
    { user: admin, password: admin-pass }
  ]
}
cluster {
  name: C
  listen: 127.0.0.1:%d
  authorization { user: route, password: route-pass }
  routes: [ %s ]
}
`, ports[i], strings.Join(routes, ", ")))
		ms[i] = &member{name: fmt.Sprintf("n%d", i+1), route: fmt.Sprintf("127.0.0.1:%d", ports[i])}
		ms[i].args = []string{"-js", "-a", "127.0.0.1", "-p", "0", "-n", ms[i].name, "-sd", t.TempDir(), "-c", conf}
		ms[i].start(t)
	}
	return ms
}

// TestHardeningClusterTakeover replays the two takeovers of the cluster
// security issue against servers started as a user would start them: an
// outsider without route credentials speaking raft on the route port, and
// a user whose permissions deny stream deletion proposing the deletion on
// the meta group's subject. Neither reaches anything: the outsider reads
// -ERR 'Authorization Violation', the user finds no responder, neither
// sees the cluster's internal traffic, and the R3 stream is still served
// by every server with its messages.
func TestHardeningClusterTakeover(t *testing.T) {
	ms := startSecuredJSCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	app, err := nats.Connect("nats://"+ms[0].run.addr, nats.UserInfo("app", "app-pass"))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	js, err := njs.New(app)
	if err != nil {
		t.Fatal(err)
	}
	createOrdersR3(t, ctx, js)
	for i := range 5 {
		if _, err := js.Publish(ctx, "orders.new", []byte(fmt.Sprint("order ", i))); err != nil {
			t.Fatal(err)
		}
	}

	// 1. Raft on the route port, as the outsider spoke it (the old
	// preamble) and with an empty credential, to every server.
	for _, m := range ms {
		for _, first := range []string{"RAFT _meta\r\n", "RAFT _meta {}\r\n", `RAFT _meta {"user":"route","pass":"guess"}` + "\r\n"} {
			c, err := net.Dial("tcp", m.route)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = c.Write([]byte(first + "\x00\x00\x00\x00raft bytes that must never be read"))
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, _ := io.ReadAll(c)
			c.Close()
			if !strings.HasPrefix(string(got), "-ERR '") {
				t.Fatalf("%s: %q got %q, want an -ERR and the close", m.name, first, got)
			}
		}
	}

	// 2. The user proposes where the meta leader listens.
	for _, m := range ms {
		nc, err := nats.Connect("nats://"+m.run.addr, nats.UserInfo("app", "app-pass"))
		if err != nil {
			t.Fatal(err)
		}
		// The bytes: a meta delete of streams/ORDERS.
		_, err = nc.Request("$JWAL.CLUSTER.META.PROPOSE", []byte("\x02\x0estreams/ORDERS"), 2*time.Second)
		nc.Close()
		if !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("%s: a user's meta proposal: %v, want no responders", m.name, err)
		}
	}
	// 3. The user watches the cluster's internal subjects.
	watch, err := nats.Connect("nats://"+ms[1].run.addr, nats.UserInfo("app", "app-pass"))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	seen := make(chan string, 64)
	for _, subj := range []string{"$JWAL.>", "_JWAL_INBOX.>"} {
		if _, err := watch.Subscribe(subj, func(m *nats.Msg) {
			select {
			case seen <- m.Subject:
			default:
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	// Cluster traffic the watcher would see if it could: a durable
	// consumer's delivery and acks (checkpointed through the meta group)
	// and the replicas' progress reports.
	cons, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", njs.ConsumerConfig{Durable: "ship", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(5, njs.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for msg := range batch.Messages() {
		if err := msg.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	select {
	case subj := <-seen:
		t.Fatalf("a user-account client received the cluster's internal subject %s", subj)
	default:
	}
	for _, m := range ms {
		nc, err := nats.Connect("nats://"+m.run.addr, nats.UserInfo("admin", "admin-pass"))
		if err != nil {
			t.Fatal(err)
		}
		js, _ := njs.New(nc)
		s, err := js.Stream(ctx, "ORDERS")
		if err != nil {
			nc.Close()
			t.Fatalf("%s: stream ORDERS after the attacks: %v", m.name, err)
		}
		info, err := s.Info(ctx)
		nc.Close()
		if err != nil || info.State.Msgs != 5 {
			t.Fatalf("%s: ORDERS after the attacks: %+v %v", m.name, info, err)
		}
	}
}
