package sysreq

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// nextEvent decodes the next message of sub into v.
func nextEvent(t *testing.T, sub *nats.Subscription, v any) {
	t.Helper()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no event on %s: %v", sub.Subject, err)
	}
	if err := json.Unmarshal(m.Data, v); err != nil {
		t.Fatalf("decoding %s: %v", m.Data, err)
	}
}

// TestConnectionEvents: a client's connection and disconnection publish
// nats-server's events with its name, its counts and the reason.
func TestConnectionEvents(t *testing.T) {
	s := startNode(t, "ev", nil)
	watcher := connectSys(t, s)
	conns, err := watcher.SubscribeSync("$SYS.ACCOUNT.*.CONNECT")
	if err != nil {
		t.Fatal(err)
	}
	discs, err := watcher.SubscribeSync("$SYS.ACCOUNT.$G.DISCONNECT")
	if err != nil {
		t.Fatal(err)
	}
	if err := watcher.Flush(); err != nil {
		t.Fatal(err)
	}

	app := connect(t, s, nats.Name("app-1"))
	// Events are published asynchronously: the watcher's own may come
	// first.
	var ce ConnectEvent
	for ce.Client.Name != "app-1" {
		nextEvent(t, conns, &ce)
	}
	if ce.Type != ConnectEventType || ce.ID == "" || ce.Time.IsZero() || ce.Server.Name != "ev" || ce.Server.ID != s.ID() {
		t.Errorf("connect event %+v", ce)
	}
	c := ce.Client
	if c.Name != "app-1" || c.Account != "$G" || c.Lang != "go" || c.Host != "127.0.0.1" || c.ID == 0 || c.Start == nil || c.Kind != "Client" || c.Server != "ev" {
		t.Errorf("connect client %+v", c)
	}
	for i := 0; i < 3; i++ {
		if err := app.Publish("work", []byte("12345")); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Flush(); err != nil {
		t.Fatal(err)
	}
	app.Close()
	var de DisconnectEvent
	nextEvent(t, discs, &de) // only app has disconnected
	if de.Type != DisconnectEventType || de.Client.ID != c.ID || de.Client.Name != "app-1" || de.Client.Stop == nil {
		t.Errorf("disconnect event %+v", de)
	}
	if de.Received.Msgs != 3 || de.Received.Bytes != 15 || de.Reason != "Client Closed" {
		t.Errorf("disconnect counts %+v / %+v, reason %q", de.Received, de.Sent, de.Reason)
	}
}

// TestConnectionEventsAcrossCluster: a watcher on one server sees the
// events of clients of the others.
func TestConnectionEventsAcrossCluster(t *testing.T) {
	servers := startCluster(t)
	watcher := connectSys(t, servers[0])
	conns, err := watcher.SubscribeSync("$SYS.ACCOUNT.$G.CONNECT")
	if err != nil {
		t.Fatal(err)
	}
	if err := watcher.Flush(); err != nil {
		t.Fatal(err)
	}
	// The subscription reaches the other servers asynchronously: connect
	// clients to s2 until one's event arrives.
	deadline := time.Now().Add(20 * time.Second)
	for {
		nc := connect(t, servers[2], nats.Name("far"))
		m, err := conns.NextMsg(500 * time.Millisecond)
		nc.Close()
		for err == nil {
			var ce ConnectEvent
			if err := json.Unmarshal(m.Data, &ce); err != nil {
				t.Fatal(err)
			}
			if ce.Client.Name == "far" { // not the watcher's own event
				if ce.Server.Name != "s2" || ce.Client.Cluster != "C" {
					t.Fatalf("event %+v", ce)
				}
				return
			}
			m, err = conns.NextMsg(500 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			t.Fatal("no connect event from s2 reached s0")
		}
	}
}
