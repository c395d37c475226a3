package server

import (
	"context"
	"strconv"
	"strings"
)

// Protocol traces (Options.Trace), in nats-server's "<<-" (from client) and
// "->>" (to client) style, logged at LevelTrace. Payloads are shown up to
// traceMax bytes. Callers check c.trace first, so none of this runs when
// tracing is off.

const traceMax = 256

func (c *client) traceIn(cmd *command) {
	line := string(cmd.line)
	if cmd.op == opConnect {
		line = redactConnect(cmd.line)
	}
	c.srv.logger.Log(context.Background(), LevelTrace, "<<- ["+line+"]", "cid", c.id)
	if cmd.op == opPub || cmd.op == opHPub {
		c.srv.logger.Log(context.Background(), LevelTrace, "<<- MSG_PAYLOAD: ["+clip(cmd.payload)+"]", "cid", c.id)
	}
}

func (c *client) traceOut(p string) {
	c.srv.logger.Log(context.Background(), LevelTrace, "->> ["+strings.TrimRight(p, "\r\n ")+"]", "cid", c.id)
}

func (c *client) traceMsgOut(sid, subj, reply, hdr, data []byte) {
	var b strings.Builder
	if len(hdr) > 0 {
		b.WriteString("HMSG ")
	} else {
		b.WriteString("MSG ")
	}
	b.Write(subj)
	b.WriteByte(' ')
	b.Write(sid)
	b.WriteByte(' ')
	if len(reply) > 0 {
		b.Write(reply)
		b.WriteByte(' ')
	}
	if len(hdr) > 0 {
		b.WriteString(strconv.Itoa(len(hdr)))
		b.WriteByte(' ')
	}
	b.WriteString(strconv.Itoa(len(hdr) + len(data)))
	c.srv.logger.Log(context.Background(), LevelTrace, "->> ["+b.String()+"]", "cid", c.id)
}

func clip(b []byte) string {
	if len(b) > traceMax {
		return strconv.Quote(string(b[:traceMax])) + "..."
	}
	return strconv.Quote(string(b))
}
