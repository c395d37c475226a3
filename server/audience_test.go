package server

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestQueuePickSameTracedOrNot: a queue group with one member on the
// publisher's server and one on another is served by either, for plain
// and traced messages alike. Each message reaches exactly one member, and
// over 200 messages of each kind both members get some (a fair pick misses
// one of them with probability 2^-199). Before dispatch was shared, a
// traced message always went to the local member.
func TestQueuePickSameTracedOrNot(t *testing.T) {
	servers := startMesh(t, 2)
	a, b := servers[0], servers[1]
	far, _ := collect(t, connect(t, b), "work", "q")
	waitFor(t, "remote queue interest", func() bool { return hasRemoteInterest(a, "work q") })
	ac := connect(t, a)
	near, _ := collect(t, ac, "work", "q")
	const n = 200
	for i := 0; i < n; i++ {
		if err := ac.Publish("work", []byte("plain")); err != nil {
			t.Fatal(err)
		}
		m := tracedMsg("work", "trace.sink", false)
		m.Data = []byte("traced")
		if err := ac.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := ac.Flush(); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]int{"near": {}, "far": {}}
	deadline := time.After(20 * time.Second)
	for total := 0; total < 2*n; total++ {
		select {
		case m := <-near:
			got["near"][string(m.Data)]++
		case m := <-far:
			got["far"][string(m.Data)]++
		case <-deadline:
			t.Fatalf("%d of %d messages arrived: %v", total, 2*n, got)
		}
	}
	for _, kind := range []string{"plain", "traced"} {
		if got["near"][kind]+got["far"][kind] != n {
			t.Errorf("%s: %d near + %d far, want %d in all", kind, got["near"][kind], got["far"][kind], n)
		}
		if got["near"][kind] == 0 || got["far"][kind] == 0 {
			t.Errorf("%s messages went to one member only: %v", kind, got)
		}
	}
	// Nothing more: each message reached one member.
	select {
	case m := <-near:
		t.Fatalf("extra message %q", m.Data)
	case m := <-far:
		t.Fatalf("extra message %q", m.Data)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestNoRespondersAfterForwarding: the routes chosen for one message are
// not reused for the next. A request no server can answer gets its 503 at
// once, right after a message that went over a route (the targets of that
// message once stayed in the publisher's scratch, and the request was sent
// to them, counted as delivered, and never answered).
func TestNoRespondersAfterForwarding(t *testing.T) {
	servers := startMesh(t, 2)
	a, b := servers[0], servers[1]
	far, _ := collect(t, connect(t, b), "there", "")
	waitFor(t, "remote interest", func() bool { return hasRemoteInterest(a, "there") })
	ac := connect(t, a)
	for i := 0; i < 3; i++ {
		if err := ac.Publish("there", []byte("x")); err != nil {
			t.Fatal(err)
		}
		recv(t, far)
		if _, err := ac.Request("nobody.home", nil, 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("request %d without responders: %v, want no responders", i, err)
		}
	}
}
