package server

import (
	"testing"

	"github.com/nats-io/nats.go"
)

func TestRoutePubReachesOtherServers(t *testing.T) {
	s := startMesh(t, 3)
	a, b, c := connect(t, s[0]), connect(t, s[1]), connect(t, s[2])
	chB, _ := collect(t, b, "foo.>", "")
	chC, _ := collect(t, c, "foo.bar", "")
	waitRemoteInterest(t, s[0], 2)

	if err := a.Publish("foo.bar", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan *nats.Msg{chB, chC} {
		if m := recv(t, ch); string(m.Data) != "hello" || m.Subject != "foo.bar" {
			t.Fatalf("got %q on %q", m.Data, m.Subject)
		}
	}
	// Headers cross the route too.
	msg := nats.NewMsg("foo.bar")
	msg.Header.Set("X-Test", "1")
	msg.Data = []byte("with header")
	if err := a.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan *nats.Msg{chB, chC} {
		if m := recv(t, ch); m.Header.Get("X-Test") != "1" || string(m.Data) != "with header" {
			t.Fatalf("got %q header %v", m.Data, m.Header)
		}
	}
}
