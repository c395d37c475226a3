package jetstream

import (
	"bytes"
	"strconv"
	"time"

	"github.com/jetwal/jetwal/natshdr"
)

// Header names jetwal reads on publish and writes on DIRECT.GET replies.
const (
	hdrMsgID            = "Nats-Msg-Id"
	hdrExpectedStream   = "Nats-Expected-Stream"
	hdrExpectedLastSeq  = "Nats-Expected-Last-Sequence"
	hdrExpectedSubjSeq  = "Nats-Expected-Last-Subject-Sequence"
	hdrExpectedSubjSubj = "Nats-Expected-Last-Subject-Sequence-Subject"
	hdrExpectedLastID   = "Nats-Expected-Last-Msg-Id"
	hdrRollup           = "Nats-Rollup"
	hdrTTL              = "Nats-TTL"
	hdrBatchID          = "Nats-Batch-Id"
	hdrIncr             = "Nats-Incr"

	hdrStream    = "Nats-Stream"
	hdrSubject   = "Nats-Subject"
	hdrSequence  = "Nats-Sequence"
	hdrTimeStamp = "Nats-Time-Stamp"

	rollupSubject = "sub"
	rollupAll     = "all"

	crlf     = "\r\n"
	maxHdrSz = 64 * 1024
)

// pubHeaders are the JetStream headers of one published message. Values
// alias the message's header bytes and are valid only while it is.
type pubHeaders struct {
	msgID          []byte
	expStream      []byte
	expLastSeq     []byte
	expSubjSeq     []byte
	expSubjSubj    []byte
	expLastMsgID   []byte
	rollup         []byte
	ttl            []byte
	incr           []byte
	batch          bool
	sched          *schedNote // schedule meaning of the message (schedule.go); set by the publish path, not parsed
	fast           *fastMark  // the fast batch of the message (fastbatch_publish.go); set by the publish path
	hasSched       bool       // a Nats-Schedule* header is present
	hasExpLastSeq  bool
	hasExpSubjSeq  bool
	hasExpLastMsgI bool
}

// parsePubHeaders scans a raw header block once and picks out the headers
// the publish path acts on. Names compare case-insensitively; surrounding
// spaces of values are trimmed.
func parsePubHeaders(hdr []byte) pubHeaders {
	var h pubHeaders
	// Skip the status line.
	i := bytes.Index(hdr, []byte(crlf))
	if i < 0 {
		return h
	}
	rest := hdr[i+2:]
	for len(rest) > 0 {
		j := bytes.Index(rest, []byte(crlf))
		var line []byte
		if j < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:j], rest[j+2:]
		}
		if len(line) == 0 {
			break
		}
		c := bytes.IndexByte(line, ':')
		if c <= 0 {
			continue
		}
		name, val := line[:c], bytes.TrimSpace(line[c+1:])
		if len(name) < 8 || (name[0]|0x20) != 'n' {
			continue // every header we want starts with "Nats-"
		}
		switch {
		case eqFold(name, hdrMsgID):
			h.msgID = val
		case eqFold(name, hdrExpectedStream):
			h.expStream = val
		case eqFold(name, hdrExpectedLastSeq):
			h.expLastSeq, h.hasExpLastSeq = val, true
		case eqFold(name, hdrExpectedSubjSeq):
			h.expSubjSeq, h.hasExpSubjSeq = val, true
		case eqFold(name, hdrExpectedSubjSubj):
			h.expSubjSubj = val
		case eqFold(name, hdrExpectedLastID):
			h.expLastMsgID, h.hasExpLastMsgI = val, true
		case eqFold(name, hdrRollup):
			h.rollup = val
		case eqFold(name, hdrTTL):
			h.ttl = val
		case eqFold(name, hdrIncr):
			h.incr = val
		case eqFold(name, hdrBatchID):
			h.batch = true
		case hasPrefixFold(name, hdrSchedule):
			h.hasSched = true
		}
	}
	return h
}

func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || (x|0x20) < 'a' || (x|0x20) > 'z' {
			return false
		}
	}
	return true
}

// headerValue returns the value of the first header called name in a raw
// header block, or nil.
func headerValue(hdr []byte, name string) []byte { return natshdr.Get(hdr, name) }

// parseSeq parses a decimal sequence header value.
func parseSeq(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

// directGetHeader builds the header block of a DIRECT.GET reply: the stored
// message's own headers first, then Nats-Stream, Nats-Subject, Nats-Sequence
// and Nats-Time-Stamp, as nats-server orders them.
func directGetHeader(buf []byte, orig []byte, stream, subj string, seq uint64, ts int64) []byte {
	buf = natshdr.Reopen(buf, orig) // its lines, without the blank line
	buf = natshdr.AppendString(buf, hdrStream, stream)
	buf = natshdr.AppendString(buf, hdrSubject, subj)
	buf = natshdr.AppendUint(buf, hdrSequence, seq)
	buf = append(buf, hdrTimeStamp+": "...)
	buf = time.Unix(0, ts).UTC().AppendFormat(buf, time.RFC3339Nano)
	return natshdr.End(append(buf, crlf...))
}

// statusHeader is a status-only header block, e.g. "NATS/1.0 404 Message Not Found".
func statusHeader(code int, desc string) []byte { return natshdr.Status(code, desc) }

// hdrLevelTooLow refuses a DIRECT.GET or CONSUMER.MSG.NEXT that needs a
// newer API level (apiserver.LevelTooLow).
var hdrLevelTooLow = statusHeader(412, "Required Api Level")
