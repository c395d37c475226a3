package server

import "bytes"

// opcode names a client protocol operation.
type opcode uint8

const (
	opPub opcode = iota + 1
	opHPub
	opSub
	opUnsub
	opPing
	opPong
	opConnect
	opInfo // sent by some clients; ignored
	opOK   // "+OK" from a client; ignored
	opErr  // "-ERR" from a client; the connection is closed
)

var opNames = [...]string{
	opPub: "PUB", opHPub: "HPUB", opSub: "SUB", opUnsub: "UNSUB", opPing: "PING",
	opPong: "PONG", opConnect: "CONNECT", opInfo: "INFO", opOK: "+OK", opErr: "-ERR",
}

func (o opcode) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "?"
}

// command is one parsed client operation. Its slices point into the read
// buffer and are valid only until the next read.
type command struct {
	op      opcode
	subject []byte // PUB, HPUB, SUB
	reply   []byte // PUB, HPUB (may be empty)
	queue   []byte // SUB (may be empty)
	sid     []byte // SUB, UNSUB
	max     int64  // UNSUB: auto-unsubscribe limit; <= 0 means "now"
	hdrLen  int    // HPUB: bytes of payload that are the header block
	payload []byte // PUB, HPUB: header block + data, without the final CRLF
	arg     []byte // CONNECT, INFO, -ERR: the rest of the line
	line    []byte // the control line without CRLF (for traces)
}

// protoErr is a protocol violation found by the parser. Every one of them
// is answered with a -ERR line and closes the connection.
type protoErr uint8

const (
	errNone protoErr = iota
	errUnknownOp
	errMaxPayload
	errMaxControlLine
)

// Texts sent as -ERR '<text>'. The first ones are nats-server's exact words.
const (
	textUnknownOp         = "Unknown Protocol Operation"
	textMaxPayload        = "Maximum Payload Violation"
	textMaxControlLine    = "maximum control line exceeded"
	textInvalidSubject    = "Invalid Subject"
	textInvalidPubSubject = "Invalid Publish Subject"
	textStale             = "Stale Connection"
	textMaxConnections    = "maximum connections exceeded"
	textBadProtocol       = "invalid client protocol"
	textNoRespNoHeaders   = "no responders requires headers support"
)

func (e protoErr) text() string {
	switch e {
	case errMaxPayload:
		return textMaxPayload
	case errMaxControlLine:
		return textMaxControlLine
	default:
		return textUnknownOp
	}
}

// limits bound what the parser accepts.
type limits struct {
	maxControlLine int   // longest argument of a control line
	maxPayload     int64 // largest PUB/HPUB total size
}

// opSpec describes an operation name and what may follow it.
type opSpec struct {
	name string
	op   opcode
	// sep: the name must be followed by a space or tab (operations with
	// arguments); otherwise anything up to the newline is ignored.
	sep bool
}

var (
	specPub     = opSpec{"PUB", opPub, true}
	specPing    = opSpec{"PING", opPing, false}
	specPong    = opSpec{"PONG", opPong, false}
	specHPub    = opSpec{"HPUB", opHPub, true}
	specSub     = opSpec{"SUB", opSub, true}
	specUnsub   = opSpec{"UNSUB", opUnsub, true}
	specConnect = opSpec{"CONNECT", opConnect, false}
	specInfo    = opSpec{"INFO", opInfo, true}
	specOK      = opSpec{"+OK", opOK, false}
	specErr     = opSpec{"-ERR", opErr, false}
)

// lower folds ASCII letters to lower case (and leaves '+', '-' alone).
func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// identify finds the operation at the start of buf. It returns the spec,
// the offset where its argument starts (after the name and any blanks), and
// whether buf held enough bytes to decide. ok=false with complete=true means
// the bytes are no known operation.
func identify(buf []byte) (spec *opSpec, argStart int, ok, complete bool) {
	switch lower(buf[0]) {
	case 'p':
		if len(buf) < 2 {
			return nil, 0, true, false
		}
		switch lower(buf[1]) {
		case 'u':
			spec = &specPub
		case 'i':
			spec = &specPing
		case 'o':
			spec = &specPong
		default:
			return nil, 0, false, true
		}
	case 'h':
		spec = &specHPub
	case 's':
		spec = &specSub
	case 'u':
		spec = &specUnsub
	case 'c':
		spec = &specConnect
	case 'i':
		spec = &specInfo
	case '+':
		spec = &specOK
	case '-':
		spec = &specErr
	default:
		return nil, 0, false, true
	}
	name := spec.name
	n := min(len(buf), len(name))
	for i := 1; i < n; i++ {
		if lower(buf[i]) != lower(name[i]) {
			return nil, 0, false, true
		}
	}
	if len(buf) <= len(name) {
		return spec, 0, true, false
	}
	i := len(name)
	if spec.sep && buf[i] != ' ' && buf[i] != '\t' {
		return nil, 0, false, true
	}
	for i < len(buf) && (buf[i] == ' ' || buf[i] == '\t') {
		i++
	}
	return spec, i, true, true
}

// parseCommand parses the first complete operation in buf into cmd.
//
// It returns the number of bytes the operation occupies. When buf holds only
// part of an operation it returns n == 0 and, once the control line is
// complete, need: the total number of bytes the operation will occupy (so
// the caller can size its buffer). On a protocol violation it returns perr.
// It allocates nothing.
func parseCommand(buf []byte, cmd *command, lim limits) (n, need int, perr protoErr) {
	if len(buf) == 0 {
		return 0, 0, errNone
	}
	spec, argStart, ok, complete := identify(buf)
	if !ok {
		return 0, 0, errUnknownOp
	}
	if !complete {
		return 0, 0, errNone
	}
	// Everything after the name and its one separator counts toward the
	// control line limit, blanks included: a run of blanks that never
	// ends must not grow the read buffer without bound.
	counted := len(spec.name) + 1
	nl := bytes.IndexByte(buf[argStart:], '\n')
	if nl < 0 {
		if len(buf)-counted > lim.maxControlLine+1 { // +1: a '\r' that the complete line drops
			return 0, 0, errMaxControlLine
		}
		return 0, 0, errNone
	}
	lineEnd := argStart + nl // index of '\n'
	argEnd := lineEnd
	if argEnd > argStart && buf[argEnd-1] == '\r' {
		argEnd--
	}
	if argEnd-counted > lim.maxControlLine {
		return 0, 0, errMaxControlLine
	}
	arg := buf[argStart:argEnd]
	*cmd = command{op: spec.op, line: buf[:argEnd]}
	next := lineEnd + 1

	switch spec.op {
	case opPing, opPong, opOK:
		return next, 0, errNone
	case opConnect, opInfo, opErr:
		cmd.arg = trimBlanks(arg)
		return next, 0, errNone
	case opSub:
		var f [4][]byte
		switch splitFields(arg, &f) {
		case 2:
			cmd.subject, cmd.sid = f[0], f[1]
		case 3:
			cmd.subject, cmd.queue, cmd.sid = f[0], f[1], f[2]
		default:
			return 0, 0, errUnknownOp
		}
		return next, 0, errNone
	case opUnsub:
		var f [4][]byte
		switch splitFields(arg, &f) {
		case 1:
			cmd.sid, cmd.max = f[0], -1
		case 2:
			cmd.sid, cmd.max = f[0], parseSize(f[1])
		default:
			return 0, 0, errUnknownOp
		}
		return next, 0, errNone
	}

	// PUB and HPUB: parse the sizes, then wait for the payload.
	var f [4][]byte
	var size int64
	nf := splitFields(arg, &f)
	if spec.op == opPub {
		switch nf {
		case 2:
			cmd.subject = f[0]
		case 3:
			cmd.subject, cmd.reply = f[0], f[1]
		default:
			return 0, 0, errUnknownOp
		}
		size = parseSize(f[nf-1])
		if size < 0 {
			return 0, 0, errUnknownOp
		}
	} else {
		switch nf {
		case 3:
			cmd.subject = f[0]
		case 4:
			cmd.subject, cmd.reply = f[0], f[1]
		default:
			return 0, 0, errUnknownOp
		}
		hdr := parseSize(f[nf-2])
		size = parseSize(f[nf-1])
		if hdr < 0 || size < 0 || hdr > size {
			return 0, 0, errUnknownOp
		}
		cmd.hdrLen = int(hdr)
	}
	return framePayload(buf, next, size, lim, &cmd.payload)
}

// framePayload is the payload half of a message operation, for clients
// (PUB, HPUB) and routes (RMSG, HMSG) alike: size bytes from next, then
// CRLF. It sets *payload and returns the operation's length, or, while
// the payload is still arriving, the length it will have (need).
func framePayload(buf []byte, next int, size int64, lim limits, payload *[]byte) (n, need int, perr protoErr) {
	if size > lim.maxPayload {
		return 0, 0, errMaxPayload
	}
	total := next + int(size) + 2
	if len(buf) < total {
		return 0, total, errNone
	}
	if buf[total-2] != '\r' || buf[total-1] != '\n' {
		return 0, 0, errUnknownOp
	}
	*payload = buf[next : next+int(size)]
	return total, 0, errNone
}

// splitFields splits arg at runs of blanks into f and returns the number of
// fields, or len(f)+1 if there are more than fit.
func splitFields(arg []byte, f *[4][]byte) int {
	n := 0
	i := 0
	for {
		for i < len(arg) && isBlank(arg[i]) {
			i++
		}
		if i == len(arg) {
			return n
		}
		start := i
		for i < len(arg) && !isBlank(arg[i]) {
			i++
		}
		if n == len(f) {
			return n + 1
		}
		f[n] = arg[start:i]
		n++
	}
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' }

func trimBlanks(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// parseSize parses a non-negative decimal of at most 18 digits; anything
// else gives -1.
func parseSize(d []byte) int64 {
	if len(d) == 0 || len(d) > 18 {
		return -1
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
