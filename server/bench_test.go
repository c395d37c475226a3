package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// pubBlock returns n PUB operations of size bytes on subj.
func pubBlock(subj string, size, n int) []byte {
	payload := bytes.Repeat([]byte("x"), size)
	var b []byte
	for i := 0; i < n; i++ {
		b = fmt.Appendf(b, "PUB %s %d\r\n", subj, size)
		b = append(b, payload...)
		b = append(b, '\r', '\n')
	}
	return b
}

// rawConnect dials s and completes the handshake without verbose mode.
func rawConnect(b *testing.B, s *Server) net.Conn {
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if _, err := r.ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	io.WriteString(conn, "CONNECT "+connectQuiet+"\r\nPING\r\n")
	if l, _ := r.ReadString('\n'); l != "PONG\r\n" {
		b.Fatalf("handshake: %q", l)
	}
	return conn
}

// flushRaw sends PING and waits for PONG, skipping anything else.
func flushRaw(b *testing.B, conn net.Conn, r *bufio.Reader) {
	io.WriteString(conn, "PING\r\n")
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if l == "PONG\r\n" {
			return
		}
	}
}

// BenchmarkServerPublish measures the server's inbound path (parse, match,
// no subscriber) from a raw socket, without client-library overhead.
func BenchmarkServerPublish(b *testing.B) {
	for _, size := range []int{16, 128, 1024} {
		b.Run(fmt.Sprintf("size=%d/subs=0", size), func(b *testing.B) {
			s := startServer(b, Options{})
			conn := rawConnect(b, s)
			defer conn.Close()
			r := bufio.NewReader(conn)
			flushRaw(b, conn, r) // eats the async INFO
			const perBlock = 1000
			block := pubBlock("bench.subject", size, perBlock)
			b.SetBytes(int64(size))
			b.ResetTimer()
			start := time.Now()
			sent := 0
			for sent < b.N {
				if _, err := conn.Write(block); err != nil {
					b.Fatal(err)
				}
				sent += perBlock
			}
			flushRaw(b, conn, r)
			b.ReportMetric(float64(sent)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// BenchmarkServerPubSub measures one raw publisher to one raw subscriber.
func BenchmarkServerPubSub(b *testing.B) {
	for _, size := range []int{16, 128} {
		b.Run(fmt.Sprintf("size=%d/subs=1", size), func(b *testing.B) {
			s := startServer(b, Options{})
			sub := rawConnect(b, s)
			defer sub.Close()
			io.WriteString(sub, "SUB bench.subject 1\r\nPING\r\n")
			sr := bufio.NewReaderSize(sub, 1<<20)
			flushRaw(b, sub, sr)
			pub := rawConnect(b, s)
			defer pub.Close()
			pr := bufio.NewReader(pub)
			flushRaw(b, pub, pr)
			const perBlock = 1000
			block := pubBlock("bench.subject", size, perBlock)
			msgLine := len(fmt.Sprintf("MSG bench.subject 1 %d\r\n", size)) + size + 2
			b.SetBytes(int64(size))
			b.ResetTimer()
			start := time.Now()
			total := (b.N + perBlock - 1) / perBlock * perBlock
			done := make(chan error, 1)
			go func() {
				_, err := io.CopyN(io.Discard, sr, int64(total*msgLine))
				done <- err
			}()
			for sent := 0; sent < total; sent += perBlock {
				if _, err := pub.Write(block); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// BenchmarkRequestReply measures nats.go request/reply round trips.
func BenchmarkRequestReply(b *testing.B) {
	s := startServer(b, Options{})
	svc := connect(b, s)
	svc.Subscribe("svc", func(m *nats.Msg) { m.Respond(m.Data) })
	svc.Flush()
	nc := connect(b, s)
	payload := []byte(strings.Repeat("r", 128))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := nc.Request("svc", payload, 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Microseconds())/float64(b.N), "µs/req")
}

// BenchmarkParse measures the parser alone on PUB operations.
func BenchmarkParse(b *testing.B) {
	block := pubBlock("bench.subject", 128, 1000)
	var in inbuf
	var cmd command
	var h countHandler
	b.SetBytes(int64(len(block) / 1000))
	b.ReportAllocs()
	for b.Loop() {
		for rest := block; len(rest) > 0; {
			space := in.space()
			n := copy(space, rest)
			rest = rest[n:]
			in.commit(n, len(space))
			if perr := in.parse(testLimits, &cmd, &h); perr != errNone {
				b.Fatal(perr.text())
			}
		}
	}
	b.ReportMetric(float64(h.n)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkProcessPub measures parse + match + dispatch of PUBs in one
// client, without sockets, with and without a subscriber.
func BenchmarkProcessPub(b *testing.B) {
	for _, subs := range []int{0, 1} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			s, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			pa, _ := net.Pipe()
			sa, _ := net.Pipe()
			pub := newClient(s, pa, 1)
			sub := newClient(s, sa, 2)
			feedClient(b, pub, []byte("CONNECT {\"verbose\":false,\"pedantic\":false}\r\n"))
			feedClient(b, sub, []byte("CONNECT {\"verbose\":false,\"pedantic\":false}\r\n"))
			if subs > 0 {
				feedClient(b, sub, []byte("SUB bench.subject 1\r\n"))
			}
			block := pubBlock("bench.subject", 128, 1000)
			b.SetBytes(128)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				feedClient(b, pub, block)
				pub.flushPending()
				resetQueue(sub)
				n += 1000
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
