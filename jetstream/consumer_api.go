package jetstream

import (
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
)

// nextOp is the CONSUMER.MSG.NEXT operation (after $JS.API.).
const nextOp = "CONSUMER.MSG.NEXT"

// handleNext serves CONSUMER.MSG.NEXT.<stream>.<consumer> on the
// requester's goroutine: the request joins the consumer's waiting list (or
// is refused with a status message) and the consumer's goroutine delivers.
func (cm *consumerManager) handleNext(m *server.Msg) {
	args := strings.TrimPrefix(m.Subject, api.Prefix+nextOp+".")
	i := strings.IndexByte(args, '.')
	if i <= 0 || m.Reply == "" {
		return
	}
	var c *consumer
	if s := cm.js.lookup(args[:i]); s != nil {
		c = s.cons.get(args[i+1:])
	}
	if c == nil && cm.js.cl != nil && !cm.js.servesStream(args[:i]) {
		return // the server serving the stream answers
	}
	if c == nil {
		// nats-server has no responder for a missing consumer.
		cm.js.srv.Publish(m.Reply, "", natshdr.Status(503, ""), nil)
		return
	}
	if len(m.Header) > 0 && apiserver.LevelTooLow(m.Header) && !c.isPush() {
		// As nats-server: after the push-based refusal, before the body.
		cm.js.srv.Publish(m.Reply, "", hdrLevelTooLow, nil)
		return
	}
	c.addRequest(strings.Clone(m.Reply), m.Data)
}
