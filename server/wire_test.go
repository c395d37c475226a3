package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

const (
	connectVerbose = `{"verbose":true,"pedantic":false,"protocol":1,"headers":true,"no_responders":true}`
	connectQuiet   = `{"verbose":false,"pedantic":false,"protocol":1,"headers":true,"no_responders":true}`
)

// TestInfoLine checks the INFO line field for field against PROTOCOL.md
// §1.1 and §1.3.
func TestInfoLine(t *testing.T) {
	s := startServer(t, Options{JetStream: true, APILevel: 5})
	c := dialRaw(t, s)
	info := c.line()
	if !strings.HasPrefix(info, "INFO {") || !strings.HasSuffix(info, "} \r\n") {
		t.Fatalf("INFO framing: %q", info)
	}
	keys := regexp.MustCompile(`"([a-z_]+)":`).FindAllStringSubmatch(info, -1)
	var order []string
	for _, k := range keys {
		order = append(order, k[1])
	}
	want := "server_id server_name version proto go host port headers max_payload jetstream client_id client_ip api_lvl"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("field order\n got %s\nwant %s", got, want)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(info, "INFO "), " \r\n")), &m); err != nil {
		t.Fatal(err)
	}
	port := s.Addr().(interface{ String() string }).String()
	checks := map[string]any{
		"server_id": s.ID(), "server_name": s.ID(), "version": DefaultVersion, "proto": 1.0,
		"go": runtime.Version(), "host": "127.0.0.1", "headers": true, "max_payload": 1048576.0,
		"jetstream": true, "client_ip": "127.0.0.1", "api_lvl": 5.0,
	}
	for k, v := range checks {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if !strings.HasSuffix(port, fmt.Sprintf(":%v", m["port"])) {
		t.Errorf("port %v does not match %s", m["port"], port)
	}
	if id, ok := m["server_id"].(string); !ok || len(id) != 56 || id[0] != 'N' {
		t.Errorf("server_id %q is not nats-server shaped", id)
	}
	if _, ok := m["client_id"].(float64); !ok {
		t.Errorf("client_id missing")
	}
	// Second INFO after the first PONG.
	c.send("CONNECT " + connectQuiet + "\r\nPING\r\n")
	c.expect("PONG\r\n")
	second := c.line()
	wantTail := `"client_ip":"127.0.0.1","connect_info":true,"remote_account":"$G","api_lvl":5} ` + "\r\n"
	if !strings.HasSuffix(second, wantTail) {
		t.Fatalf("second INFO %q does not end with %q", second, wantTail)
	}
	// Only once.
	c.send("PING\r\n")
	c.expect("PONG\r\n")
	c.send("PING\r\n")
	c.expect("PONG\r\n")
}

func TestInfoWithoutJetStream(t *testing.T) {
	s := startServer(t, Options{APILevel: 5})
	c := dialRaw(t, s)
	info := c.line()
	if strings.Contains(info, "jetstream") || strings.Contains(info, "api_lvl") {
		t.Fatalf("INFO advertises JetStream: %q", info)
	}
}

// TestVerboseSessionLikeX10 replays the first X10 capture session and
// compares every byte the server sends.
func TestVerboseSessionLikeX10(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(connectVerbose)
	c.send("SUB foo 1\r\n")
	c.expect("+OK\r\n")
	c.send("SUB foo q1 2\r\n")
	c.expect("+OK\r\n")
	c.send("PUB foo 5\r\nhello\r\n")
	c.expect("+OK\r\nMSG foo 1 5\r\nhello\r\nMSG foo 2 5\r\nhello\r\n")
	c.send("HPUB foo 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n")
	c.expect("+OK\r\nHMSG foo 1 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\nHMSG foo 2 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n")
	c.send("UNSUB 1\r\n")
	c.expect("+OK\r\n")
	// Sub 2 has received 2 messages already, so max 1 removes it at once.
	c.send("UNSUB 2 1\r\n")
	c.expect("+OK\r\n")
	c.send("PUB foo 2\r\nhi\r\n")
	c.expect("+OK\r\n")
	c.send("PUB foo 2\r\nhi\r\n")
	c.expect("+OK\r\n")
	c.send("PING\r\n")
	c.expect("PONG\r\n")
	waitFor(t, "subscriptions to go", func() bool { return s.NumSubscriptions() == 0 })
}

// TestQuietSessionLikeX10 replays the second X10 session: no +OK, the 503
// no-responders status, an unanswered request to an internal subscription,
// and the max payload violation that closes the connection.
func TestQuietSessionLikeX10(t *testing.T) {
	s := startServer(t, Options{JetStream: true})
	if _, err := s.Subscribe("$JS.API.>", "", func(*Msg) {}); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, s)
	c.handshake(connectQuiet)
	c.send("SUB _INBOX.x 1\r\n")
	c.send("PUB nobody.listens _INBOX.x 0\r\n\r\n")
	c.expect("HMSG _INBOX.x 1 46 46\r\nNATS/1.0 503\r\nNats-Subject: nobody.listens\r\n\r\n\r\n")
	// Someone (the internal sub) gets this one, so no 503.
	c.send("PUB $JS.API.NOPE.REQ _INBOX.x 0\r\n\r\n")
	c.send("PING\r\n")
	c.expect("PONG\r\n")
	c.send("PUB foo 2000000\r\n")
	c.expect("-ERR 'Maximum Payload Violation'\r\n")
	c.expectClosed()
}

func TestUnknownOperationCloses(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(connectQuiet)
	c.send("FOO\r\n")
	c.expect("-ERR 'Unknown Protocol Operation'\r\n")
	c.expectClosed()
}

func TestMalformedArgumentsClose(t *testing.T) {
	for _, in := range []string{"PUB foo bar\r\n", "SUB foo\r\n", "HPUB foo 10 5\r\n", "PUB foo 2\r\nabcd\r\n", "CONNECT {nope\r\n"} {
		t.Run(strings.Fields(in)[0], func(t *testing.T) {
			s := startServer(t, Options{})
			c := dialRaw(t, s)
			c.handshake(connectQuiet)
			c.send(in)
			c.expect("-ERR 'Unknown Protocol Operation'\r\n")
			c.expectClosed()
		})
	}
}

func TestMaxControlLine(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(connectQuiet)
	// 4096 bytes of argument are fine.
	arg := strings.Repeat("a", 4096-2) + " 1"
	c.send("SUB " + arg + "\r\nPING\r\n")
	c.expect("PONG\r\n")
	c.send("SUB " + strings.Repeat("a", 5000) + " 1\r\n")
	c.expect("-ERR 'maximum control line exceeded'\r\n")
	c.expectClosed()
}

func TestInvalidSubjectKeepsConnection(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(connectVerbose)
	c.send("SUB foo..bar 1\r\n")
	c.expect("-ERR 'Invalid Subject'\r\n")
	c.send("SUB foo.>.bar 2\r\n")
	c.expect("-ERR 'Invalid Subject'\r\n")
	c.send("PING\r\n")
	c.expect("PONG\r\n")
	if s.NumSubscriptions() != 0 {
		t.Fatalf("%d subscriptions registered", s.NumSubscriptions())
	}
}

func TestPedanticInvalidPublishSubject(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(`{"verbose":false,"pedantic":true,"protocol":1}`)
	c.send("PUB foo.* 1\r\nx\r\nPING\r\n")
	c.expect("-ERR 'Invalid Publish Subject'\r\nPONG\r\n")
}

func TestConnectChecks(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.line()
	c.send(`CONNECT {"protocol":1,"headers":false,"no_responders":true}` + "\r\n")
	c.expect("-ERR 'no responders requires headers support'\r\n")
	c.expectClosed()

	c = dialRaw(t, s)
	c.line()
	c.send(`CONNECT {"protocol":7}` + "\r\n")
	c.expect("-ERR 'invalid client protocol'\r\n")
	c.expectClosed()
}

// TestDefaultsBeforeConnect: like nats-server, a client that never sends
// CONNECT is verbose (telnet sessions get +OK).
func TestDefaultsBeforeConnect(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.line()
	c.send("sub foo 1\r\npub foo 2\r\nhi\r\n")
	c.expect("+OK\r\n+OK\r\nMSG foo 1 2\r\nhi\r\n")
}

func TestHeadersStrippedForOldClients(t *testing.T) {
	s := startServer(t, Options{})
	old := dialRaw(t, s)
	old.handshake(`{"verbose":false,"protocol":1,"headers":false}`)
	old.send("SUB foo 1\r\nPING\r\n")
	old.expect("PONG\r\n")
	pub := dialRaw(t, s)
	pub.handshake(connectQuiet)
	pub.send("HPUB foo 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n")
	old.expect("MSG foo 1 5\r\nhello\r\n")
}

func TestSplitWritesAndQuirks(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(connectQuiet)
	in := "SUB foo  1\r\nSUB bar\t q 2\r\nUNSUB 1 \r\nSUB foo  3\r\nPUB foo r.x 5\r\nhello\r\nHPUB bar 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n"
	for i := 0; i < len(in); i++ {
		c.send(in[i : i+1])
	}
	c.expect("MSG foo 3 r.x 5\r\nhello\r\nHMSG bar 2 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPONG\r\n")
}

func TestEchoFalseRaw(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(`{"verbose":false,"protocol":1,"echo":false,"headers":true,"no_responders":true}`)
	c.send("SUB foo 1\r\nSUB _INBOX.me 2\r\nPUB foo 1\r\nx\r\nPUB foo _INBOX.me 1\r\nx\r\nPING\r\n")
	// The plain publish is not echoed; the request only reaches ourselves,
	// which does not count, so it gets a 503.
	c.expect("HMSG _INBOX.me 2 35 35\r\nNATS/1.0 503\r\nNats-Subject: foo\r\n\r\n\r\nPONG\r\n")
}

func TestStaleConnection(t *testing.T) {
	s := startServer(t, Options{PingInterval: 30 * time.Millisecond, MaxPingsOut: 2})
	c := dialRaw(t, s)
	c.line()
	c.send("CONNECT " + connectQuiet + "\r\n")
	c.expect("PING\r\nPING\r\n-ERR 'Stale Connection'\r\n")
	c.expectClosed()
}

func TestPongKeepsConnection(t *testing.T) {
	s := startServer(t, Options{PingInterval: 20 * time.Millisecond, MaxPingsOut: 1})
	c := dialRaw(t, s)
	c.handshake(connectQuiet)
	for i := 0; i < 5; i++ {
		c.expect("PING\r\n")
		c.send("PONG\r\n")
	}
	if s.NumClients() != 1 {
		t.Fatalf("client count %d", s.NumClients())
	}
}

func TestMaxConnections(t *testing.T) {
	s := startServer(t, Options{MaxConnections: 1})
	first := dialRaw(t, s)
	first.handshake(connectQuiet)
	second := dialRaw(t, s)
	if l := second.line(); !strings.HasPrefix(l, "INFO {") {
		t.Fatalf("got %q", l)
	}
	second.expect("-ERR 'maximum connections exceeded'\r\n")
	second.expectClosed()
	first.send("PING\r\n")
	first.expect("PONG\r\n")
}

func TestClientErrCloses(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s)
	c.handshake(connectQuiet)
	c.send("-ERR 'bye'\r\n")
	c.expectClosed()
	waitFor(t, "client removal", func() bool { return s.NumClients() == 0 })
}
