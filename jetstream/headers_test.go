package jetstream

import (
	"testing"
	"time"
)

func TestParsePubHeaders(t *testing.T) {
	hdr := []byte("NATS/1.0\r\nNats-Msg-Id: a-1\r\nnats-expected-last-sequence:  7 \r\nNats-Expected-Stream: S\r\n" +
		"Nats-Expected-Last-Subject-Sequence: 3\r\nNats-Expected-Last-Subject-Sequence-Subject: x.*\r\n" +
		"Nats-Expected-Last-Msg-Id: a-0\r\nNats-Rollup: sub\r\nOther: v\r\n\r\n")
	h := parsePubHeaders(hdr)
	if string(h.msgID) != "a-1" || string(h.expLastSeq) != "7" || !h.hasExpLastSeq || string(h.expStream) != "S" ||
		string(h.expSubjSeq) != "3" || string(h.expSubjSubj) != "x.*" || string(h.expLastMsgID) != "a-0" ||
		!h.hasExpLastMsgI || string(h.rollup) != "sub" || h.batch || len(h.ttl) != 0 {
		t.Fatalf("parsed %+v", h)
	}
	if h := parsePubHeaders([]byte("NATS/1.0\r\nNats-Batch-Id: b\r\n\r\n")); !h.batch {
		t.Fatal("batch header missed")
	}
	for _, bad := range []string{"", "NATS/1.0", "garbage\r\n:\r\nno colon\r\n\r\n"} {
		if h := parsePubHeaders([]byte(bad)); h.msgID != nil || h.hasExpLastSeq {
			t.Fatalf("%q parsed %+v", bad, h)
		}
	}
	if v := headerValue(hdr, "other"); string(v) != "v" {
		t.Fatalf("headerValue %q", v)
	}
	if v := headerValue(hdr, "Missing"); v != nil {
		t.Fatalf("headerValue missing %q", v)
	}
}

// TestDirectGetHeaderBytes rebuilds the captured DIRECT.GET replies (X3)
// byte for byte, including the original header placed first.
func TestDirectGetHeaderBytes(t *testing.T) {
	ts, _ := time.Parse(time.RFC3339Nano, "2026-12-02T08:28:29.628430751Z")
	got := directGetHeader(nil, nil, "python_articles", "hello.python", 2, ts.UnixNano())
	want := "NATS/1.0\r\nNats-Stream: python_articles\r\nNats-Subject: hello.python\r\nNats-Sequence: 2\r\n" +
		"Nats-Time-Stamp: 2026-12-02T08:28:29.628430751Z\r\n\r\n"
	if string(got) != want || len(got) != 137 {
		t.Fatalf("got %q (%d bytes)", got, len(got))
	}
	ts, _ = time.Parse(time.RFC3339Nano, "2026-12-02T08:31:17.222932591Z")
	got = directGetHeader(nil, []byte("NATS/1.0\r\nNats-Msg-Id: article-9\r\n\r\n"), "python_articles", "hello.python", 9, ts.UnixNano())
	if len(got) != 161 || string(got[:34]) != "NATS/1.0\r\nNats-Msg-Id: article-9\r\n" {
		t.Fatalf("with original header: %q (%d bytes)", got, len(got))
	}
	if s := string(statusHeader(404, "Message Not Found")); s != "NATS/1.0 404 Message Not Found\r\n\r\n" || len(s) != 34 {
		t.Fatalf("status %q", s)
	}
}

// TestInflightQueueIsReclaimed: with appends always in flight the queue of
// pending acks must not grow with the number of messages ever published.
func TestInflightQueueIsReclaimed(t *testing.T) {
	s := &stream{}
	s.onAppend = s.onAppended
	seq := uint64(0)
	for i := 0; i < 100_000; i++ {
		s.inflight = append(s.inflight, pendingAppend{seq: uint64(i + 1)})
		if i >= 10 { // keep ten in flight at all times
			seq++
			s.onAppended(seq, 0, nil)
		}
	}
	if n := len(s.inflight) - s.inHead; n != 10 {
		t.Fatalf("%d in flight", n)
	}
	if cap(s.inflight) > 4096 {
		t.Fatalf("queue grew to %d entries", cap(s.inflight))
	}
}
