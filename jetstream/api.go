package jetstream

import (
	"bytes"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
)

// registerAPI registers with the API server (apiserver, which holds the
// routing table and the handlers that decode a request, call one operation
// and encode the reply) the one handler that stays in this package:
// DIRECT.GET, whose reply is the stored message itself (or a status, or a
// batch of messages), not JSON, and which the leader's own direct
// subscriptions serve too (cluster_direct.go).
func (js *JetStream) registerAPI() {
	js.api.Register("DIRECT.GET", apiserver.Gets, js.apiDirectGet)
}

// queue returns the work queue q names.
func (js *JetStream) queue(q apiserver.Queue) *workQueue {
	if q == apiserver.Gets {
		return js.gets
	}
	return js.mgmt
}

// handleAPI is the $JS.API.> subscription handler. It runs on the
// publisher's goroutine: it only copies the request and queues it.
// nats-server leaves an unknown operation unanswered, so the client waits
// for its timeout; jetwal answers it with an error at once.
func (js *JetStream) handleAPI(m *server.Msg) {
	h, args, ok := js.api.Route(m.Subject)
	if !ok {
		if m.Reply != "" {
			js.api.RespondError(&apiserver.Request{Subject: m.Subject, Reply: m.Reply}, api.TypeError,
				api.Errorf(api.ErrBadRequest, "unknown JetStream API request %q", m.Subject))
		}
		return
	}
	if h.Fn == nil {
		return // an operation with a subscription of its own
	}
	if js.cl != nil && !js.answers(h.Op, args) {
		return // another server of the cluster answers
	}
	r := &apiserver.Request{
		Subject: strings.Clone(m.Subject),
		Reply:   strings.Clone(m.Reply),
		Hdr:     bytes.Clone(m.Header),
		Data:    bytes.Clone(m.Data),
		Args:    strings.Clone(args),
		Client:  m.ClientID,
	}
	// Requests about one stream run in order; requests about different
	// streams (and the account-wide ones) do not wait for each other.
	key, _, _ := strings.Cut(r.Args, ".")
	if !js.queue(h.Queue).submitKey(key, func() { js.api.Serve(h, r) }) {
		js.log.Warn("JetStream API queue full, request dropped", "subject", r.Subject)
	}
}

// SendReply sends an encoded API reply and counts it; failed marks an error
// reply (apiserver.Replier).
func (js *JetStream) SendReply(r *apiserver.Request, b []byte, failed bool) {
	// Counted before the reply goes out, so a client that got its reply
	// finds the request in the stats (jsz).
	js.apiTotal.Add(1)
	if failed {
		js.apiErrors.Add(1)
	}
	if r.Reply != "" {
		js.srv.Publish(r.Reply, "", nil, b)
	}
	js.auditAPI(r, b)
}
