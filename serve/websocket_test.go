package serve

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// TestWebsocketJetStream: a nats.go client on ws:// uses JetStream like a
// TCP one (publish with acks, a pull consumer's fetch), the ports file
// names the listener under "websocket", and /varz and /connz show it.
func TestWebsocketJetStream(t *testing.T) {
	dir := t.TempDir()
	ports := filepath.Join(dir, "jetwal.ports")
	s, err := New(Options{
		Server: server.Options{Host: "127.0.0.1", Port: -1,
			Websocket: &server.WebsocketOptions{Host: "127.0.0.1", Port: -1, NoTLS: true, Compression: true}},
		JetStream: true,
		Store:     Store{Dir: filepath.Join(dir, "store")},
		HTTPHost:  "127.0.0.1", HTTPPort: -1,
		PortsFile: ports,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})

	b, err := os.ReadFile(ports)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string][]string
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if len(p["websocket"]) != 1 || p["websocket"][0] != s.WebsocketURL() || !strings.HasPrefix(p["websocket"][0], "ws://127.0.0.1:") {
		t.Fatalf("ports file %s: websocket %v, want [%s]", b, p["websocket"], s.WebsocketURL())
	}

	nc, err := nats.Connect(p["websocket"][0], nats.NoReconnect(), nats.Timeout(10*time.Second), nats.Compression(true))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WS", Subjects: []string{"ws.>"}})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 200<<10)
	for i, data := range []string{"one", "two", big} {
		ack, err := js.Publish(ctx, "ws.a", []byte(data))
		if err != nil || ack.Sequence != uint64(i+1) {
			t.Fatalf("publish %d: %+v, %v", i, ack, err)
		}
	}
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(3, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range batch.Messages() {
		got = append(got, string(m.Data()))
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if batch.Error() != nil || len(got) != 3 || got[0] != "one" || got[2] != big {
		t.Fatalf("fetched %d messages (%v)", len(got), batch.Error())
	}

	var v monitor.Varz
	if err := getJSON(s, "/varz", &v); err != nil {
		t.Fatal(err)
	}
	if v.Websocket == nil || v.Websocket.Port != s.core.WebsocketAddr().(*net.TCPAddr).Port || !v.Websocket.NoTLS || !v.Websocket.Compression {
		t.Fatalf("varz websocket %+v", v.Websocket)
	}
	var cz struct {
		Conns []struct {
			Type string `json:"type"`
		} `json:"connections"`
	}
	if err := getJSON(s, "/connz", &cz); err != nil {
		t.Fatal(err)
	}
	if len(cz.Conns) != 1 || cz.Conns[0].Type != "websocket" {
		t.Fatalf("connz %+v", cz)
	}
}
