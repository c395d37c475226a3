package server

import (
	"bytes"
	"strconv"
)

// The route protocol, as nats-server v2.15 speaks it between servers of one
// cluster (all names case-insensitive, arguments separated by blanks):
//
//	CONNECT {json}                        the soliciting side, first
//	INFO {json}                           both sides; later INFOs gossip other servers
//	RS+ <account> <subject>               interest in subject
//	RS+ <account> <subject> <queue> <weight>   queue interest; weight = local members
//	RS- <account> <subject> [<queue>]     interest gone
//	RMSG <account> <subject> [reply] <#bytes>
//	RMSG <account> <subject> + <reply> <queue>... <#bytes>   for these queue groups
//	RMSG <account> <subject> | <queue>... <#bytes>           same, no reply
//	HMSG ... <#hdr bytes> <#total bytes>  RMSG with a header block
//	PING / PONG / +OK / -ERR '<text>'
//
// A message carries the queue groups the sender chose this server for; the
// receiver delivers it to its local plain subscribers and to one local
// member of each listed group, and never forwards it to another route.
// jetwal does not announce the leafnode-origin forms (LS+, LS-, LMSG),
// pooled or per-account routes, or compression, so a nats-server peer
// never sends them.

// routeOp names a route protocol operation.
type routeOp uint8

const (
	rOpSub routeOp = iota + 1
	rOpUnsub
	rOpMsg
	rOpHMsg
	rOpPing
	rOpPong
	rOpConnect
	rOpInfo
	rOpOK
	rOpErr
)

var routeOpNames = [...]string{
	rOpSub: "RS+", rOpUnsub: "RS-", rOpMsg: "RMSG", rOpHMsg: "HMSG", rOpPing: "PING", rOpPong: "PONG",
	rOpConnect: "CONNECT", rOpInfo: "INFO", rOpOK: "+OK", rOpErr: "-ERR",
}

func (o routeOp) String() string {
	if int(o) < len(routeOpNames) && routeOpNames[o] != "" {
		return routeOpNames[o]
	}
	return "?"
}

// routeCmd is one parsed route operation. Its slices point into the read
// buffer and are valid only until the next read; queues keeps its backing
// array between operations.
type routeCmd struct {
	op      routeOp
	account []byte   // RS+, RS-, RMSG, HMSG
	subject []byte   // RS+, RS-, RMSG, HMSG
	reply   []byte   // RMSG, HMSG (may be empty)
	queue   []byte   // RS+, RS- (may be empty)
	weight  int32    // RS+ with a queue: >= 1
	queues  [][]byte // RMSG, HMSG: the queue groups to deliver to
	hdrLen  int      // HMSG
	payload []byte   // RMSG, HMSG: header block + data
	arg     []byte   // CONNECT, INFO, -ERR
	line    []byte   // the control line without CRLF (for traces)
	fields  [][]byte // scratch for splitting
}

var routeSpecs = []struct {
	name string
	op   routeOp
	sep  bool // must be followed by a blank
}{
	{"RS+", rOpSub, true}, {"RS-", rOpUnsub, true}, {"RMSG", rOpMsg, true}, {"HMSG", rOpHMsg, true},
	{"PING", rOpPing, false}, {"PONG", rOpPong, false}, {"CONNECT", rOpConnect, false},
	{"INFO", rOpInfo, true}, {"+OK", rOpOK, false}, {"-ERR", rOpErr, false},
}

// identifyRoute finds the operation at the start of buf, as identify does
// for clients.
func identifyRoute(buf []byte) (op routeOp, name string, sep bool, argStart int, ok, complete bool) {
	for _, sp := range routeSpecs {
		n := min(len(buf), len(sp.name))
		match := true
		for i := 0; i < n; i++ {
			if lower(buf[i]) != lower(sp.name[i]) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if len(buf) <= len(sp.name) {
			// A prefix of this name: wait for more, unless a longer
			// name could still match (none of ours prefixes another).
			return sp.op, sp.name, sp.sep, 0, true, false
		}
		i := len(sp.name)
		if sp.sep && buf[i] != ' ' && buf[i] != '\t' {
			return 0, "", false, 0, false, true
		}
		for i < len(buf) && (buf[i] == ' ' || buf[i] == '\t') {
			i++
		}
		return sp.op, sp.name, sp.sep, i, true, true
	}
	return 0, "", false, 0, false, true
}

// parseRouteCommand parses the first complete route operation in buf, with
// the same contract as parseCommand: n bytes consumed, or n == 0 with need
// (the total size once the control line is complete), or a protocol error.
func parseRouteCommand(buf []byte, cmd *routeCmd, lim limits) (n, need int, perr protoErr) {
	if len(buf) == 0 {
		return 0, 0, errNone
	}
	op, name, _, argStart, ok, complete := identifyRoute(buf)
	if !ok {
		return 0, 0, errUnknownOp
	}
	if !complete {
		return 0, 0, errNone
	}
	counted := len(name) + 1
	nl := bytes.IndexByte(buf[argStart:], '\n')
	if nl < 0 {
		if len(buf)-counted > lim.maxControlLine+1 {
			return 0, 0, errMaxControlLine
		}
		return 0, 0, errNone
	}
	lineEnd := argStart + nl
	argEnd := lineEnd
	if argEnd > argStart && buf[argEnd-1] == '\r' {
		argEnd--
	}
	if argEnd-counted > lim.maxControlLine {
		return 0, 0, errMaxControlLine
	}
	arg := buf[argStart:argEnd]
	fields, queues := cmd.fields[:0], cmd.queues[:0]
	*cmd = routeCmd{op: op, line: buf[:argEnd], fields: fields, queues: queues}
	next := lineEnd + 1

	switch op {
	case rOpPing, rOpPong, rOpOK:
		return next, 0, errNone
	case rOpConnect, rOpInfo, rOpErr:
		cmd.arg = trimBlanks(arg)
		return next, 0, errNone
	}
	f := splitAll(arg, cmd.fields[:0])
	cmd.fields = f
	switch op {
	case rOpSub:
		switch len(f) {
		case 2:
			cmd.account, cmd.subject = f[0], f[1]
		case 4:
			cmd.account, cmd.subject, cmd.queue = f[0], f[1], f[2]
			// A missing or malformed weight counts as one member, as in
			// nats-server.
			w := parseSize(f[3])
			if w < 1 {
				w = 1
			}
			cmd.weight = int32(min(w, 1<<31-1))
		default:
			return 0, 0, errUnknownOp
		}
		return next, 0, errNone
	case rOpUnsub:
		switch len(f) {
		case 2:
			cmd.account, cmd.subject = f[0], f[1]
		case 3:
			cmd.account, cmd.subject, cmd.queue = f[0], f[1], f[2]
		default:
			return 0, 0, errUnknownOp
		}
		return next, 0, errNone
	}

	// RMSG and HMSG: account, subject, then the reply and queue groups,
	// then one size (RMSG) or two (HMSG).
	sizes := 1
	if op == rOpHMsg {
		sizes = 2
	}
	if len(f) < 2+sizes {
		return 0, 0, errUnknownOp
	}
	cmd.account, cmd.subject = f[0], f[1]
	mid := f[2 : len(f)-sizes]
	switch {
	case len(mid) == 0:
	case len(mid) == 1:
		cmd.reply = mid[0]
	case len(mid[0]) == 1 && mid[0][0] == '+':
		cmd.reply = mid[1]
		cmd.queues = append(cmd.queues, mid[2:]...)
	case len(mid[0]) == 1 && mid[0][0] == '|':
		cmd.queues = append(cmd.queues, mid[1:]...)
	default:
		return 0, 0, errUnknownOp
	}
	size := parseSize(f[len(f)-1])
	if size < 0 {
		return 0, 0, errUnknownOp
	}
	if op == rOpHMsg {
		hdr := parseSize(f[len(f)-2])
		if hdr < 0 || hdr > size {
			return 0, 0, errUnknownOp
		}
		cmd.hdrLen = int(hdr)
	}
	return framePayload(buf, next, size, lim, &cmd.payload)
}

// splitAll splits arg at runs of blanks, appending to f.
func splitAll(arg []byte, f [][]byte) [][]byte {
	i := 0
	for {
		for i < len(arg) && isBlank(arg[i]) {
			i++
		}
		if i == len(arg) {
			return f
		}
		start := i
		for i < len(arg) && !isBlank(arg[i]) {
			i++
		}
		f = append(f, arg[start:i])
	}
}

// routeHandler runs parsed route operations; handleRoute reports whether
// to continue.
type routeHandler interface {
	handleRoute(cmd *routeCmd) bool
}

// parseRoute is inbuf.parse for a route connection.
func (r *inbuf) parseRoute(lim limits, cmd *routeCmd, h routeHandler) protoErr {
	for {
		n, need, perr := parseRouteCommand(r.unparsed(), cmd, lim)
		if perr != errNone {
			return perr
		}
		if n == 0 {
			r.need = need
			return errNone
		}
		r.consume(n)
		r.need = 0
		if !h.handleRoute(cmd) {
			return errNone
		}
	}
}

// routeMsgSize bounds the framed size of an RMSG/HMSG (see appendRouteMsg).
func routeMsgSize(acc, subj, reply []byte, queues []string, hdr, data []byte) int {
	n := len(acc) + len(subj) + len(reply) + len(hdr) + len(data) + 5 + 6 + 2*19 + 4
	for _, q := range queues {
		n += len(q) + 1
	}
	return n
}

// appendRouteMsg frames a message for a route onto b: RMSG, or HMSG when
// hdr is not empty and the route takes headers. queues are the groups the
// receiver must deliver to.
func appendRouteMsg(b []byte, withHeaders bool, acc, subj, reply []byte, queues []string, hdr, data []byte) []byte {
	if !withHeaders {
		hdr = nil
	}
	if len(hdr) > 0 {
		b = append(b, "HMSG "...)
	} else {
		b = append(b, "RMSG "...)
	}
	b = append(b, acc...)
	b = append(b, ' ')
	b = append(b, subj...)
	b = append(b, ' ')
	if len(queues) > 0 {
		if len(reply) > 0 {
			b = append(b, "+ "...)
			b = append(b, reply...)
			b = append(b, ' ')
		} else {
			b = append(b, "| "...)
		}
		for _, q := range queues {
			b = append(b, q...)
			b = append(b, ' ')
		}
	} else if len(reply) > 0 {
		b = append(b, reply...)
		b = append(b, ' ')
	}
	if len(hdr) > 0 {
		b = strconv.AppendInt(b, int64(len(hdr)), 10)
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(len(hdr)+len(data)), 10)
	b = append(b, '\r', '\n')
	b = append(b, hdr...)
	b = append(b, data...)
	return append(b, '\r', '\n')
}

// appendRouteSub frames RS+ (weight > 0) or RS- for subject and queue.
func appendRouteSub(b []byte, sub bool, acc, subj, queue string, weight int32) []byte {
	if sub {
		b = append(b, "RS+ "...)
	} else {
		b = append(b, "RS- "...)
	}
	b = append(b, acc...)
	b = append(b, ' ')
	b = append(b, subj...)
	if queue != "" {
		b = append(b, ' ')
		b = append(b, queue...)
		if sub {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(max(weight, 1)), 10)
		}
	}
	return append(b, '\r', '\n')
}
