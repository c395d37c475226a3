package jetstream

import (
	"testing"
)

// FuzzPubHeaders: header parsing never panics and never reads outside the
// block, whatever a client sends.
func FuzzPubHeaders(f *testing.F) {
	f.Add([]byte("NATS/1.0\r\nNats-Msg-Id: a\r\nNats-Expected-Last-Sequence: 4\r\n\r\n"))
	f.Add([]byte("NATS/1.0 503\r\n\r\n"))
	f.Add([]byte("NATS/1.0\r\nNats-Rollup:sub\r\n"))
	f.Fuzz(func(t *testing.T, hdr []byte) {
		h := parsePubHeaders(hdr)
		for _, v := range [][]byte{h.msgID, h.expStream, h.expLastSeq, h.expSubjSeq, h.expLastMsgID, h.rollup} {
			if len(v) > len(hdr) {
				t.Fatal("value longer than the header")
			}
		}
		_ = headerValue(hdr, hdrMsgID)
		_ = directGetHeader(nil, hdr, "S", "a.b", 1, 0)
	})
}
