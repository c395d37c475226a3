package server

import (
	"bytes"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
)

var testLimits = limits{maxControlLine: DefaultMaxControlLine, maxPayload: DefaultMaxPayload}

// parsed is a command with its slices copied, for comparisons.
type parsed struct {
	Op                                       opcode
	Subject, Reply, Queue, Sid, Payload, Arg string
	HdrLen                                   int
	Max                                      int64
}

func snapshot(c *command) parsed {
	return parsed{
		Op: c.op, Subject: string(c.subject), Reply: string(c.reply), Queue: string(c.queue),
		Sid: string(c.sid), Payload: string(c.payload), Arg: string(c.arg), HdrLen: c.hdrLen, Max: c.max,
	}
}

// recorder collects parsed commands.
type recorder struct{ cmds []parsed }

func (r *recorder) handle(c *command) bool {
	r.cmds = append(r.cmds, snapshot(c))
	return true
}

// feed pushes chunks through an inbuf the way readLoop does, with reads no
// larger than the free space the buffer offers.
func feed(lim limits, chunks ...[]byte) ([]parsed, protoErr) {
	var in inbuf
	var cmd command
	var rec recorder
	for _, ch := range chunks {
		for len(ch) > 0 {
			space := in.space()
			n := copy(space, ch)
			ch = ch[n:]
			in.commit(n, len(space))
			if perr := in.parse(lim, &cmd, &rec); perr != errNone {
				return rec.cmds, perr
			}
		}
	}
	return rec.cmds, errNone
}

func TestParseCommands(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []parsed
		err  protoErr
	}{
		{"pub", "PUB foo 5\r\nhello\r\n", []parsed{{Op: opPub, Subject: "foo", Payload: "hello"}}, errNone},
		{"pub reply", "PUB foo bar.baz 2\r\nhi\r\n", []parsed{{Op: opPub, Subject: "foo", Reply: "bar.baz", Payload: "hi"}}, errNone},
		{"pub empty", "PUB $JS.API.INFO _INBOX.x 0\r\n\r\n", []parsed{{Op: opPub, Subject: "$JS.API.INFO", Reply: "_INBOX.x"}}, errNone},
		{"pub lower case and tabs", "pub\tfoo\t\t3\nabc\r\n", []parsed{{Op: opPub, Subject: "foo", Payload: "abc"}}, errNone},
		{"payload may hold CRLF", "PUB a 4\r\n\r\n\r\n\r\n", []parsed{{Op: opPub, Subject: "a", Payload: "\r\n\r\n"}}, errNone},
		{"hpub", "HPUB foo 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n",
			[]parsed{{Op: opHPub, Subject: "foo", HdrLen: 18, Payload: "NATS/1.0\r\nA: b\r\n\r\nhello"}}, errNone},
		{"hpub reply", "HPUB s r 12 12\r\nNATS/1.0\r\n\r\n\r\n",
			[]parsed{{Op: opHPub, Subject: "s", Reply: "r", HdrLen: 12, Payload: "NATS/1.0\r\n\r\n"}}, errNone},
		{"sub nats.go double space", "SUB _INBOX.abc.*  1\r\n", []parsed{{Op: opSub, Subject: "_INBOX.abc.*", Sid: "1"}}, errNone},
		{"sub queue", "SUB foo q1 2\r\n", []parsed{{Op: opSub, Subject: "foo", Queue: "q1", Sid: "2"}}, errNone},
		{"unsub trailing space", "UNSUB 1 \r\n", []parsed{{Op: opUnsub, Sid: "1", Max: -1}}, errNone},
		{"unsub max", "UNSUB 2 1\r\n", []parsed{{Op: opUnsub, Sid: "2", Max: 1}}, errNone},
		{"unsub bad max", "UNSUB 2 x\r\n", []parsed{{Op: opUnsub, Sid: "2", Max: -1}}, errNone},
		{"ping pong", "PING\r\nPONG\r\nping\n", []parsed{{Op: opPing}, {Op: opPong}, {Op: opPing}}, errNone},
		{"connect", `CONNECT {"verbose":false}` + "\r\n", []parsed{{Op: opConnect, Arg: `{"verbose":false}`}}, errNone},
		{"ok info err", "+OK\r\nINFO {}\r\n-ERR 'x'\r\n", []parsed{{Op: opOK}, {Op: opInfo, Arg: "{}"}, {Op: opErr, Arg: "'x'"}}, errNone},
		{"unknown op", "FOO\r\n", nil, errUnknownOp},
		{"unknown op after good", "PING\r\nXYZ\r\n", []parsed{{Op: opPing}}, errUnknownOp},
		{"unknown op without newline", "FOO", nil, errUnknownOp},
		{"msg from client", "MSG foo 1 2\r\nhi\r\n", nil, errUnknownOp},
		{"pub missing space", "PUBfoo 1\r\nx\r\n", nil, errUnknownOp},
		{"pub no size", "PUB foo\r\n", nil, errUnknownOp},
		{"pub bad size", "PUB foo bar\r\n", nil, errUnknownOp},
		{"pub too many args", "PUB a b c 1\r\nx\r\n", nil, errUnknownOp},
		{"pub wrong terminator", "PUB foo 2\r\nhiX\r\n", nil, errUnknownOp},
		{"max payload", "PUB foo 2000000\r\n", nil, errMaxPayload},
		{"hpub hdr bigger than total", "HPUB foo 10 5\r\n", nil, errUnknownOp},
		{"sub one arg", "SUB foo\r\n", nil, errUnknownOp},
		{"unsub no sid", "UNSUB\r\n", nil, errUnknownOp},
		{"control line too long", "SUB " + strings.Repeat("a", 5000) + " 1\r\n", nil, errMaxControlLine},
		{"control line too long, unterminated", "PUB " + strings.Repeat("a", 5000), nil, errMaxControlLine},
		{"incomplete", "PUB foo 5\r\nhel", nil, errNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := feed(testLimits, []byte(c.in))
			if err != c.err {
				t.Fatalf("error = %v (%s), want %v", err, err.text(), c.err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
			// Every split point must give the same answer.
			for i := 1; i < len(c.in); i++ {
				got2, err2 := feed(testLimits, []byte(c.in[:i]), []byte(c.in[i:]))
				if err2 != c.err || !reflect.DeepEqual(got2, c.want) {
					t.Fatalf("split at %d: got %+v, %v", i, got2, err2)
				}
			}
		})
	}
}

func TestErrorTexts(t *testing.T) {
	for e, want := range map[protoErr]string{
		errUnknownOp:      "Unknown Protocol Operation",
		errMaxPayload:     "Maximum Payload Violation",
		errMaxControlLine: "maximum control line exceeded",
	} {
		if e.text() != want {
			t.Errorf("%d: %q, want %q", e, e.text(), want)
		}
	}
}

// TestParseLargeAndMany checks buffer growth for a payload bigger than the
// read buffer and for many small operations.
func TestParseLargeAndMany(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 300_000)
	in := append([]byte(fmt.Sprintf("PUB big %d\r\n", len(big))), big...)
	in = append(in, "\r\n"...)
	for i := 0; i < 1000; i++ {
		in = fmt.Appendf(in, "PUB s.%d 3\r\nabc\r\n", i)
	}
	// Deliver in odd-sized pieces.
	var chunks [][]byte
	for rest := in; len(rest) > 0; {
		n := min(len(rest), 777)
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	got, err := feed(testLimits, chunks...)
	if err != errNone {
		t.Fatal(err.text())
	}
	if len(got) != 1001 || len(got[0].Payload) != len(big) || got[1000].Subject != "s.999" {
		t.Fatalf("got %d commands", len(got))
	}
}

// countHandler counts commands without keeping them.
type countHandler struct{ n int }

func (h *countHandler) handle(*command) bool { h.n++; return true }

// TestParserAllocatesNothing: once the buffer is warm, parsing a stream of
// PUB/HPUB/PING operations allocates nothing.
func TestParserAllocatesNothing(t *testing.T) {
	var chunk []byte
	for i := 0; i < 50; i++ {
		chunk = append(chunk, "PUB bench.subject 128\r\n"...)
		chunk = append(chunk, bytes.Repeat([]byte("p"), 128)...)
		chunk = append(chunk, "\r\nHPUB h _INBOX.r 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n"...)
	}
	var in inbuf
	var cmd command
	var h countHandler
	step := func() {
		for rest := chunk; len(rest) > 0; {
			space := in.space()
			n := copy(space, rest)
			rest = rest[n:]
			in.commit(n, len(space))
			if perr := in.parse(testLimits, &cmd, &h); perr != errNone {
				t.Fatal(perr.text())
			}
		}
	}
	step()
	if allocs := testing.AllocsPerRun(200, step); allocs != 0 {
		t.Fatalf("parser allocates %.1f times per chunk, want 0", allocs)
	}
	// step ran once above, once as AllocsPerRun's warm-up and 200 times.
	if h.n != 150*202 {
		t.Fatalf("parsed %d commands, want %d", h.n, 150*202)
	}
}

// FuzzProtocolParser feeds arbitrary input split into two chunks. The parser
// must not panic, must produce exactly what it produces for the unsplit
// input, and every error must be one of the -ERR texts.
func FuzzProtocolParser(f *testing.F) {
	seeds := []string{
		"CONNECT {\"verbose\":false,\"pedantic\":false,\"protocol\":1,\"headers\":true,\"no_responders\":true}\r\nPING\r\n",
		"PUB foo 5\r\nhello\r\n",
		"PUB foo reply 0\r\n\r\n",
		"HPUB foo 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n",
		"SUB _INBOX.x.*  1\r\nUNSUB 1 \r\nUNSUB 2 1\r\n",
		"SUB foo q1 2\r\n",
		"PING\r\nPONG\r\n+OK\r\n-ERR 'x'\r\n",
		"FOO\r\n",
		"PUB foo 2000000\r\n",
		"HPUB foo 10 5\r\n",
		"PUB foo 2\r\nhiX\r\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint16(i*3))
	}
	lim := limits{maxControlLine: 64, maxPayload: 1024} // small limits reach the error paths
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		at := 0
		if len(data) > 0 {
			at = int(split) % (len(data) + 1)
		}
		whole, werr := feed(lim, data)
		parts, perr := feed(lim, data[:at], data[at:])
		if werr != perr || !reflect.DeepEqual(whole, parts) {
			t.Fatalf("split at %d differs:\nwhole %+v %v\nsplit %+v %v", at, whole, werr, parts, perr)
		}
		if perr != errNone {
			switch line := "-ERR '" + perr.text() + "'\r\n"; line {
			case "-ERR 'Unknown Protocol Operation'\r\n", "-ERR 'Maximum Payload Violation'\r\n",
				"-ERR 'maximum control line exceeded'\r\n":
			default:
				t.Fatalf("unexpected error line %q", line)
			}
		}
		for _, c := range parts {
			if (c.Op == opPub || c.Op == opHPub) && (int64(len(c.Payload)) > lim.maxPayload || c.HdrLen > len(c.Payload)) {
				t.Fatalf("accepted out-of-bounds message %+v", c)
			}
		}
		fuzzClient(t, data, at)
	})
}

// fuzzClient runs the input through a real client (no socket) on a server
// with an internal catch-all subscription: dispatch must not panic, and a
// protocol error must leave "-ERR '<text>'" as the last thing queued.
func fuzzClient(t *testing.T, data []byte, at int) {
	s, err := New(Options{MaxPayload: 1024, MaxControlLine: 64})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(">", "", func(m *Msg) { _ = len(m.Subject) + len(m.Header) + len(m.Data) }); err != nil {
		t.Fatal(err)
	}
	conn, peer := net.Pipe()
	defer conn.Close()
	defer peer.Close()
	c := newClient(s, conn, 1)
	for _, chunk := range [][]byte{data[:at], data[at:]} {
		for len(chunk) > 0 && !c.closed.Load() {
			space := c.in.space()
			n := copy(space, chunk)
			chunk = chunk[n:]
			c.in.commit(n, len(space))
			c.processInput(c.limits())
			checkBuffered(t, c)
		}
	}
	out := queuedString(c)
	cmds, perr := feed(c.limits(), data)
	for _, cmd := range cmds {
		if cmd.Op == opConnect || cmd.Op == opErr {
			return // these may close the connection before the parser error
		}
	}
	if perr != errNone {
		if want := "-ERR '" + perr.text() + "'\r\n"; !strings.HasSuffix(out, want) {
			t.Fatalf("protocol error %q not reported; output ends %q", perr.text(), out[max(0, len(out)-80):])
		}
	}
}

// checkBuffered asserts the bound on what a connection holds for a partial
// operation: one control line and one payload, whatever the input.
func checkBuffered(t *testing.T, c *client) {
	t.Helper()
	lim := c.limits()
	bound := len("CONNECT ") + lim.maxControlLine + 2 + int(lim.maxPayload) + 2
	if n := len(c.in.unparsed()); !c.closed.Load() && n > bound {
		t.Fatalf("connection buffers %d unparsed bytes, above the bound %d", n, bound)
	}
	if n := cap(c.in.buf); n > 2*(bound+maxReadBuf) {
		t.Fatalf("read buffer capacity %d above %d", n, 2*(bound+maxReadBuf))
	}
}

// TestBlankFloodBounded: an operation name followed by blanks that never end
// (spaces or tabs, for every operation) is cut off at the control line
// limit with nats-server's error, instead of growing the read buffer.
func TestBlankFloodBounded(t *testing.T) {
	s, err := New(Options{MaxControlLine: 4096})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"PUB", "HPUB", "SUB", "UNSUB", "CONNECT", "PING", "PONG", "INFO", "+OK", "-ERR"} {
		for _, blank := range []string{" ", "\t"} {
			conn, peer := net.Pipe()
			c := newClient(s, conn, 1)
			flood := []byte(op + strings.Repeat(blank, 64<<10))
			fed := 0
			for fed < 16<<20 && !c.closed.Load() {
				space := c.in.space()
				chunk := flood
				if fed > 0 {
					chunk = flood[len(op):] // blanks only, after the name
				}
				n := copy(space, chunk)
				c.in.commit(n, len(space))
				c.processInput(c.limits())
				checkBuffered(t, c)
				fed += n
			}
			if !c.closed.Load() {
				t.Fatalf("%s followed by %d bytes of %q: connection still open", op, fed, blank)
			}
			if fed > 16<<10 {
				t.Fatalf("%s + %q: closed only after %d bytes", op, blank, fed)
			}
			if out := queuedString(c); !strings.HasSuffix(out, "-ERR 'maximum control line exceeded'\r\n") {
				t.Fatalf("%s + %q: output ends %q", op, blank, out[max(0, len(out)-60):])
			}
			conn.Close()
			peer.Close()
		}
	}
}
