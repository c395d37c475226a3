package server

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestSubscribeRouted: a routed internal subscription on one server gets
// the requests of a client of another, answers with PublishRouted across
// the route, and its interest leaves the other servers on Unsubscribe. A
// plain internal subscription stays local.
func TestSubscribeRouted(t *testing.T) {
	servers := startMesh(t, 2)
	a, b := servers[0], servers[1]
	sub, err := b.SubscribeRouted("svc.echo", func(m *Msg) {
		b.PublishRouted(m.Reply, "", nil, append([]byte("from b: "), m.Data...))
	})
	if err != nil {
		t.Fatal(err)
	}
	local, err := b.Subscribe("svc.local", "", func(m *Msg) { b.PublishRouted(m.Reply, "", nil, []byte("local")) })
	if err != nil {
		t.Fatal(err)
	}
	defer local.Unsubscribe()
	waitFor(t, "svc.echo interest on a", func() bool { return hasRemoteInterest(a, "svc.echo") })
	if hasRemoteInterest(a, "svc.local") {
		t.Fatal("a plain internal subscription was announced to the routes")
	}

	nc := connect(t, a)
	m, err := nc.Request("svc.echo", []byte("hi"), 10*time.Second)
	if err != nil || string(m.Data) != "from b: hi" {
		t.Fatalf("request across the route: %v %q", err, msgText(m))
	}

	sub.Unsubscribe()
	sub.Unsubscribe() // again: nothing
	waitFor(t, "svc.echo interest gone from a", func() bool { return !hasRemoteInterest(a, "svc.echo") })
	if _, err := b.SubscribeRouted("a..b", func(*Msg) {}); err != ErrInvalidSubject {
		t.Errorf("invalid subject: %v", err)
	}
	if _, err := b.SubscribeRouted("x", nil); err == nil {
		t.Error("nil handler accepted")
	}
}

func msgText(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}
