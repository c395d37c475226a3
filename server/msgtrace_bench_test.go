package server

import (
	"fmt"
	"net"
	"testing"
)

// hpubBlock is n HPUBs to subj, each with header block hdr and a payload
// of size bytes.
func hpubBlock(subj, hdr string, size, n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		b = fmt.Appendf(b, "HPUB %s %d %d\r\n%s", subj, len(hdr), len(hdr)+size, hdr)
		for j := 0; j < size; j++ {
			b = append(b, 'x')
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// BenchmarkProcessPubHeader is BenchmarkProcessPub for messages with a
// header block that does not ask for a trace: what every message with
// headers pays for message tracing is the look for Nats-Trace-Dest.
func BenchmarkProcessPubHeader(b *testing.B) {
	benchHPub(b, "NATS/1.0\r\nNats-Msg-Id: 0123456789abcdef\r\nX-Application: orders\r\n\r\n", 1000)
}

// BenchmarkMsgTraced is the cost of a traced message (one subscriber, the
// event published to a subject nobody listens to).
func BenchmarkMsgTraced(b *testing.B) {
	benchHPub(b, "NATS/1.0\r\nNats-Trace-Dest: trace.dest\r\n\r\n", 100)
}

func benchHPub(b *testing.B, hdr string, perLoop int) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	pa, _ := net.Pipe()
	sa, _ := net.Pipe()
	pub := newClient(s, pa, 1)
	sub := newClient(s, sa, 2)
	feedClient(b, pub, []byte("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n"))
	feedClient(b, sub, []byte("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n"))
	feedClient(b, sub, []byte("SUB bench.subject 1\r\n"))
	block := hpubBlock("bench.subject", hdr, 128, perLoop)
	b.SetBytes(int64(perLoop * (len(hdr) + 128)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		feedClient(b, pub, block)
		pub.flushPending()
		resetQueue(sub)
		n += perLoop
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkWantsTrace is the check itself, on a header block without a
// trace header.
func BenchmarkWantsTrace(b *testing.B) {
	hdr := []byte("NATS/1.0\r\nNats-Msg-Id: 0123456789abcdef\r\nX-Application: orders\r\n\r\n")
	n := 0
	for b.Loop() {
		if wantsTrace(hdr) {
			n++
		}
	}
	if n != 0 {
		b.Fatal("header without Nats-Trace-Dest wants a trace")
	}
}
