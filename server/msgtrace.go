package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/subject"
)

// Message tracing, as nats-server 2.11+ does it (the `nats trace` command).
// A client publishes a message with the header Nats-Trace-Dest: <subject>;
// the server then publishes one JSON event to that subject describing what
// happened to the message: where it came in (ingress), which subscriptions
// got it or why not (egress), which stream captured it (JetStream). With
// Nats-Trace-Only: true (or 1, on) the message is not delivered and not
// stored: the event says where it would have gone.
//
// A traced message takes its own path (msgtrace_deliver.go): processPub
// hands a message whose header block names Nats-Trace-Dest to tracePub, and
// every other message pays only for looking for that name in its header.
//
// What nats-server also does and jetwal does not:
//   - the W3C traceparent header (with its sampled flag set) starts a trace
//     only in an account with a trace destination configured (msg_trace
//     {dest, sampling}); jetwal has no such configuration, so traceparent
//     alone traces nothing (it is listed in the event's headers when
//     Nats-Trace-Dest is there too);
//   - no subject mappings, imports or exports to report ("sm", "se", "si");
//   - a route to another jetwal does not trace: a route egress says the
//     remote does not support tracing, and a trace-only message is not
//     forwarded at all, as nats-server does with a remote too old to trace
//     (no Nats-Trace-Hop header, no "hops" count);
//   - the js event has no error and no "nointerest": the stream's own
//     verdict (a limit, a duplicate) is not reported back;
//   - with Nats-Trace-Only, in-process handlers other than streams (the
//     JetStream API, system requests) do not run, where nats-server calls
//     them;
//   - an ingress error that closes the connection (a payload over the
//     maximum) sends no event, and Accept-Encoding does not compress it.

// Header names and values of message tracing (nats-server's spelling; the
// names are matched case-sensitively, as nats-server does).
const (
	MsgTraceDest          = "Nats-Trace-Dest"
	MsgTraceOnly          = "Nats-Trace-Only"
	MsgTraceHop           = "Nats-Trace-Hop"
	MsgTraceOriginAccount = "Nats-Trace-Origin-Account"
	// msgTraceDestDisabled is the Nats-Trace-Dest value that turns tracing
	// off (not a valid subject, on purpose).
	msgTraceDestDisabled = "trace disabled"
)

// The "type" of each event in MsgTraceEvent.Events.
const (
	MsgTraceIngressType   = "in"
	MsgTraceJetStreamType = "js"
	MsgTraceEgressType    = "eg"
)

// Connection kinds in ingress and egress events (nats-server's numbers).
const (
	MsgTraceKindClient = 0
	MsgTraceKindRouter = 1
)

// The egress errors, in nats-server's words.
const (
	msgTraceErrNoEcho          = "Not delivered because of no echo"
	msgTraceErrSubDeny         = "Not delivered because subscription denies this subject"
	msgTraceErrSubClosed       = "Not delivered because subscription is closed"
	msgTraceErrClientClosed    = "Not delivered because client is closed"
	msgTraceErrAutoSubExceeded = "Not delivered because auto-unsubscribe exceeded"
	msgTraceErrOnlyNoSupport   = "Not delivered because remote does not support message tracing"
	msgTraceErrNoSupport       = "Message delivered but remote does not support message tracing so no trace event generated from there"
)

// MsgTraceEvent is the JSON document published to the trace destination.
type MsgTraceEvent struct {
	Server  MsgTraceServer  `json:"server"`
	Request MsgTraceRequest `json:"request"`
	Hops    int             `json:"hops,omitempty"`
	Events  []any           `json:"events"`
}

// MsgTraceServer is the "server" block of an event (nats-server's ServerInfo).
type MsgTraceServer struct {
	Name      string    `json:"name"`
	Host      string    `json:"host"`
	ID        string    `json:"id"`
	Cluster   string    `json:"cluster,omitempty"`
	Version   string    `json:"ver"`
	JetStream bool      `json:"jetstream"`
	Flags     uint64    `json:"flags"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
}

// MsgTraceRequest describes the traced message: all its headers (names in
// the case they were sent) and its size, header included.
type MsgTraceRequest struct {
	Header  map[string][]string `json:"header,omitempty"`
	MsgSize int                 `json:"msgsize,omitempty"`
}

// MsgTraceIngress is the first event: the connection the message came in on.
type MsgTraceIngress struct {
	Type    string    `json:"type"`
	Time    time.Time `json:"ts"`
	Kind    int       `json:"kind"`
	CID     uint64    `json:"cid"`
	Name    string    `json:"name,omitempty"`
	Account string    `json:"acc"`
	Subject string    `json:"subj"`
	Error   string    `json:"error,omitempty"`
}

// MsgTraceEgress is one connection the message went to (or would have, or
// did not, with Error saying why).
type MsgTraceEgress struct {
	Type         string    `json:"type"`
	Time         time.Time `json:"ts"`
	Kind         int       `json:"kind"`
	CID          uint64    `json:"cid"`
	Name         string    `json:"name,omitempty"`
	Hop          string    `json:"hop,omitempty"`
	Account      string    `json:"acc,omitempty"`
	Subscription string    `json:"sub,omitempty"`
	Queue        string    `json:"queue,omitempty"`
	Error        string    `json:"error,omitempty"`
}

// MsgTraceJetStream is a stream that captured the message (or would have,
// with Nats-Trace-Only).
type MsgTraceJetStream struct {
	Type       string    `json:"type"`
	Time       time.Time `json:"ts"`
	Stream     string    `json:"stream"`
	Subject    string    `json:"subject,omitempty"`
	NoInterest bool      `json:"nointerest,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// StreamTracer tells the tracer whether the internal subscription with
// filter belongs to a stream: its name, and the subject the stream stores a
// message published to subj under (after the stream's subject transform).
// JetStream provides it (the server does not know streams); it runs on the
// publisher's goroutine and must not block.
type StreamTracer func(filter, subj string) (stream, stored string, ok bool)

// msgTraceHooks is the server's tracing state.
type msgTraceHooks struct {
	seq atomic.Uint64 // of the events' server blocks
}

// SetStreamTracer installs fn for the global account $G; see
// Account.SetStreamTracer.
func (s *Server) SetStreamTracer(fn StreamTracer) { s.gacc.SetStreamTracer(fn) }

// SetStreamTracer installs fn, so traces of the account's messages report
// the streams that capture them (and trace-only messages are not handed to
// them); nil removes it. Each account's JetStream installs its own.
func (a *Account) SetStreamTracer(fn StreamTracer) {
	if fn == nil {
		a.streams.Store(nil)
		return
	}
	a.streams.Store(&fn)
}

// msgTrace is one message being traced (publisher's read goroutine only).
type msgTrace struct {
	srv   *Server
	acc   *Account // the publisher's: the event goes to dest in it
	dest  string
	only  bool
	event MsgTraceEvent
	in    *MsgTraceIngress
}

var traceDestKey = []byte(MsgTraceDest)

// wantsTrace is the cheap test processPub makes on a message with a header
// block: does it name Nats-Trace-Dest at all?
func wantsTrace(hdr []byte) bool { return bytes.Contains(hdr, traceDestKey) }

// traceHeaders reads a header block into a map (names as sent, values
// trimmed; fields with an empty name or value are left out, as nats-server
// does) and returns it with the Nats-Trace-Dest value; ok is false when the
// block has no usable Nats-Trace-Dest, or when tracing was turned off.
func traceHeaders(hdr []byte) (h map[string][]string, dest string, ok bool) {
	if !bytes.HasPrefix(hdr, []byte("NATS/1.0")) {
		return nil, "", false
	}
	found, off := false, false
	natshdr.Fields(hdr, func(name, value, _ []byte) bool {
		if name == nil || len(value) == 0 {
			return true
		}
		key, val := string(name), string(value)
		if key == MsgTraceDest && !found {
			if val == msgTraceDestDisabled {
				off = true
				return false
			}
			found, dest = true, val
		}
		if h == nil {
			h = make(map[string][]string)
		}
		h[key] = append(h[key], val)
		return true
	})
	if off {
		return nil, "", false
	}
	return h, dest, found
}

// traceOnlyValue reports whether a Nats-Trace-Only value asks for tracing
// without delivery (nats-server takes 1, true and on, in any case).
func traceOnlyValue(vals []string) bool {
	if len(vals) == 0 {
		return false
	}
	switch strings.ToLower(vals[0]) {
	case "1", "true", "on":
		return true
	}
	return false
}

// startTrace decides what to do with a message that names Nats-Trace-Dest.
// It returns the trace to fill (nil: deliver the message untraced) and
// whether to drop the message instead (a trace-only message that cannot be
// traced, or a destination the client may not publish to).
func (c *client) startTrace(cmd *command) (t *msgTrace, drop bool) {
	h, dest, ok := traceHeaders(cmd.payload[:cmd.hdrLen])
	if !ok {
		return nil, false
	}
	only := traceOnlyValue(h[MsgTraceOnly])
	if _, ok := h[MsgTraceOriginAccount]; ok {
		// An old server's marker: nats-server refuses to trace it.
		c.srv.logger.Debug("message tracing disabled by header", "cid", c.id, "header", MsgTraceOriginAccount)
		return nil, only
	}
	if !subject.ValidLiteral(dest) {
		c.srv.logger.Debug("message trace destination is not a valid subject", "cid", c.id, "dest", dest)
		return nil, only
	}
	if p := c.perms.Load(); p != nil && !p.canPublish(stringView(dest)) {
		c.srv.logger.Debug("publish permission violation", "cid", c.id, "user", c.user, "subject", dest)
		c.sendErrLine(permPubViolation(stringView(dest)))
		return nil, true
	}
	t = &msgTrace{srv: c.srv, acc: c.acc.Load(), dest: dest, only: only}
	t.in = &MsgTraceIngress{
		Type: MsgTraceIngressType, Time: time.Now().UTC(), Kind: MsgTraceKindClient,
		CID: c.id, Name: c.opts.Name, Account: c.acc.Load().name, Subject: string(cmd.subject),
	}
	t.event.Request = MsgTraceRequest{Header: h, MsgSize: len(cmd.payload)}
	t.event.Events = append(t.event.Events, t.in)
	return t, false
}

// disableTraceHeader returns a copy of hdr with the value of its first
// Nats-Trace-Dest field replaced by "trace disabled".
func disableTraceHeader(hdr []byte) []byte {
	key := []byte("\r\n" + MsgTraceDest + ":")
	i := bytes.Index(hdr, key)
	if i < 0 {
		return hdr
	}
	start := i + len(key)
	if start < len(hdr) && hdr[start] == ' ' {
		start++
	}
	end := bytes.Index(hdr[start:], []byte("\r\n"))
	if end < 0 {
		return hdr
	}
	out := make([]byte, 0, len(hdr)+len(msgTraceDestDisabled))
	out = append(out, hdr[:start]...)
	out = append(out, msgTraceDestDisabled...)
	return append(out, hdr[start+end:]...)
}

func (t *msgTrace) egress(e *MsgTraceEgress) {
	e.Type, e.Time = MsgTraceEgressType, time.Now().UTC()
	t.event.Events = append(t.event.Events, e)
}

func (t *msgTrace) jetStream(stream, stored string) {
	t.event.Events = append(t.event.Events, &MsgTraceJetStream{
		Type: MsgTraceJetStreamType, Time: time.Now().UTC(), Stream: stream, Subject: stored,
	})
}

// send publishes the event to the trace destination.
func (t *msgTrace) send() {
	s := t.srv
	host := s.opts.Host
	if host == "" {
		host = "0.0.0.0"
	}
	t.event.Server = MsgTraceServer{
		Name: s.Name(), Host: host, ID: s.ID(), Cluster: s.ClusterName(), Version: s.Version(),
		Seq: s.msgTrace.seq.Add(1), Time: time.Now().UTC(),
	}
	if s.opts.JetStream {
		t.event.Server.JetStream, t.event.Server.Flags = true, 1 // nats-server's JetStreamEnabled bit
	}
	b, err := json.Marshal(&t.event)
	if err != nil {
		s.logger.Error("message trace event not encoded", "dest", t.dest, "err", err)
		return
	}
	t.acc.Publish(t.dest, "", nil, b)
}
