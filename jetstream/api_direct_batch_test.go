package jetstream

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// directMany sends a DIRECT.GET to stream and collects the reply messages up
// to and including the first one carrying a status (EOB or an error).
func directMany(t *testing.T, nc *nats.Conn, stream, body string) (msgs []*nats.Msg, end *nats.Msg) {
	t.Helper()
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(api.SubjDirectGet+stream, inbox, []byte(body)); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("%s %s: after %d messages: %v", stream, body, len(msgs), err)
		}
		if m.Header.Get("Status") != "" {
			return msgs, m
		}
		msgs = append(msgs, m)
	}
}

// seqsOf lists the Nats-Sequence headers of msgs.
func seqsOf(msgs []*nats.Msg) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Header.Get("Nats-Sequence"))
	}
	return fmt.Sprint(out)
}

// headerList lists header name of msgs.
func headerList(msgs []*nats.Msg, name string) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Header.Get(name))
	}
	return fmt.Sprint(out)
}

func checkStatus(t *testing.T, what string, m *nats.Msg, status, desc string) {
	t.Helper()
	if got, d := m.Header.Get("Status"), m.Header.Get("Description"); got != status || d != desc {
		t.Errorf("%s: status %q %q, want %q %q (%v)", what, got, d, status, desc, m.Header)
	}
}

// checkEOB checks the terminating status of a batched reply.
func checkEOB(t *testing.T, what string, m *nats.Msg, pending, last, upTo string) {
	t.Helper()
	checkStatus(t, what, m, "204", "EOB")
	if p, l, u := m.Header.Get("Nats-Num-Pending"), m.Header.Get("Nats-Last-Sequence"), m.Header.Get("Nats-UpTo-Sequence"); p != pending || l != last || u != upTo {
		t.Errorf("%s: EOB pending %q last %q upto %q, want %q %q %q", what, p, l, u, pending, last, upTo)
	}
}

// msgTime returns the stored time of message seq, read with a direct get.
func msgTime(t *testing.T, nc *nats.Conn, stream string, seq uint64) time.Time {
	t.Helper()
	m := request(t, nc, api.SubjDirectGet+stream, fmt.Sprintf(`{"seq":%d}`, seq))
	ts, err := time.Parse(time.RFC3339Nano, m.Header.Get("Nats-Time-Stamp"))
	if err != nil {
		t.Fatalf("time of %d: %v (%v)", seq, err, m.Header)
	}
	return ts
}

func TestDirectGetBatch(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		nc := ts.connect()
		str, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}, AllowDirect: true, Storage: storage})
		if err != nil {
			t.Fatal(err)
		}
		// Ten messages, odd sequences on s.a and even on s.b; seq 4 has a
		// header of its own.
		for i := 1; i <= 10; i++ {
			m := nats.NewMsg("s.a")
			if i%2 == 0 {
				m.Subject = "s.b"
			}
			m.Data = []byte("msg-" + strconv.Itoa(i))
			if i == 4 {
				m.Header.Set("X-Own", "kept")
			}
			if _, err := js.PublishMsg(ctxT(t), m); err != nil {
				t.Fatal(err)
			}
		}

		msgs, end := directMany(t, nc, "S", `{"seq":1,"batch":3}`)
		if seqsOf(msgs) != "[1 2 3]" || headerList(msgs, "Nats-Num-Pending") != "[9 8 7]" ||
			headerList(msgs, "Nats-Last-Sequence") != "[0 1 2]" || string(msgs[2].Data) != "msg-3" {
			t.Errorf("batch 3: seqs %s pending %s last %s", seqsOf(msgs), headerList(msgs, "Nats-Num-Pending"), headerList(msgs, "Nats-Last-Sequence"))
		}
		if msgs[0].Header.Get("Nats-Stream") != "S" || msgs[0].Header.Get("Nats-Subject") != "s.a" || msgs[0].Header.Get("Nats-Time-Stamp") == "" {
			t.Errorf("batch headers: %v", msgs[0].Header)
		}
		checkEOB(t, "batch 3", end, "7", "3", "")

		// The stored headers come first and are kept.
		msgs, end = directMany(t, nc, "S", `{"seq":4,"batch":1}`)
		if len(msgs) != 1 || msgs[0].Header.Get("X-Own") != "kept" || msgs[0].Header.Get("Nats-Sequence") != "4" {
			t.Errorf("own header: %v", msgs)
		}
		checkEOB(t, "batch from 4", end, "6", "4", "")

		// next_by_subj, literal and with a wildcard; the batch ends at the
		// end of the stream.
		msgs, end = directMany(t, nc, "S", `{"seq":4,"batch":100,"next_by_subj":"s.a"}`)
		if seqsOf(msgs) != "[5 7 9]" || headerList(msgs, "Nats-Num-Pending") != "[2 1 0]" {
			t.Errorf("next_by_subj s.a: %s %s", seqsOf(msgs), headerList(msgs, "Nats-Num-Pending"))
		}
		checkEOB(t, "next_by_subj s.a", end, "0", "9", "")
		msgs, end = directMany(t, nc, "S", `{"seq":9,"batch":5,"next_by_subj":"s.*"}`)
		if seqsOf(msgs) != "[9 10]" {
			t.Errorf("next_by_subj s.*: %s", seqsOf(msgs))
		}
		checkEOB(t, "next_by_subj s.*", end, "0", "10", "")

		// max_bytes stops the reply once reached: after one message here.
		msgs, end = directMany(t, nc, "S", `{"seq":1,"batch":5,"max_bytes":5}`)
		if seqsOf(msgs) != "[1]" {
			t.Errorf("max_bytes: %s", seqsOf(msgs))
		}
		checkEOB(t, "max_bytes", end, "9", "1", "")

		// Deleted messages are stepped over.
		if err := str.DeleteMsg(ctxT(t), 2); err != nil {
			t.Fatal(err)
		}
		msgs, end = directMany(t, nc, "S", `{"seq":1,"batch":2}`)
		if seqsOf(msgs) != "[1 3]" || headerList(msgs, "Nats-Last-Sequence") != "[0 1]" {
			t.Errorf("over a deleted message: %s %s", seqsOf(msgs), headerList(msgs, "Nats-Last-Sequence"))
		}
		checkEOB(t, "over a deleted message", end, "7", "3", "")

		// no_hdr: bare payloads, and (as nats-server) the EOB keeps the
		// first pending count.
		msgs, end = directMany(t, nc, "S", `{"seq":7,"batch":2,"no_hdr":true}`)
		if len(msgs) != 2 || len(msgs[0].Header) != 0 || string(msgs[1].Data) != "msg-8" {
			t.Errorf("no_hdr: %v", msgs)
		}
		checkEOB(t, "no_hdr", end, "4", "8", "")

		// start_time: from the first message stored at or after it.
		at := msgTime(t, nc, "S", 6)
		msgs, end = directMany(t, nc, "S", fmt.Sprintf(`{"start_time":%q,"batch":2}`, at.Format(time.RFC3339Nano)))
		if len(msgs) != 2 {
			t.Fatalf("start_time batch: %s", seqsOf(msgs))
		}
		// Message 6, or an earlier one stored within the same clock tick.
		if first, _ := strconv.ParseUint(msgs[0].Header.Get("Nats-Sequence"), 10, 64); first > 6 || first == 0 || !msgTime(t, nc, "S", first).Equal(at) {
			t.Errorf("start_time batch: %s", seqsOf(msgs))
		}
		if end.Header.Get("Status") != "204" {
			t.Errorf("start_time batch end: %v", end.Header)
		}
		// Without batch it is a single get, with the plain headers.
		m := request(t, nc, api.SubjDirectGet+"S", fmt.Sprintf(`{"start_time":%q}`, at.Add(time.Hour).Format(time.RFC3339Nano)))
		checkStatus(t, "start_time after the last message", m, "404", "Message Not Found")
		m = request(t, nc, api.SubjDirectGet+"S", fmt.Sprintf(`{"start_time":%q}`, time.Unix(0, 0).UTC().Format(time.RFC3339Nano)))
		if m.Header.Get("Nats-Sequence") != "1" || m.Header.Get("Nats-Num-Pending") != "" || string(m.Data) != "msg-1" {
			t.Errorf("start_time single: %v %q", m.Header, m.Data)
		}

		// Nothing at the start: a lone 404, no EOB.
		msgs, end = directMany(t, nc, "S", `{"seq":11,"batch":3}`)
		if len(msgs) != 0 {
			t.Errorf("past the end: %s", seqsOf(msgs))
		}
		checkStatus(t, "past the end", end, "404", "Message Not Found")
		msgs, end = directMany(t, nc, "S", `{"seq":1,"batch":3,"next_by_subj":"s.zz"}`)
		if len(msgs) != 0 {
			t.Errorf("no such subject: %s", seqsOf(msgs))
		}
		checkStatus(t, "no such subject", end, "404", "Message Not Found")
	})
}

func TestDirectGetMultiLast(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		nc := ts.connect()
		if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "K", Subjects: []string{"k.>"}, AllowDirect: true, Storage: storage}); err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"k.a", "k.b", "k.a", "k.c.x", "k.b", "k.c.y"} {
			if _, err := js.Publish(ctxT(t), subj, []byte(subj)); err != nil {
				t.Fatal(err)
			}
		}
		msgs, end := directMany(t, nc, "K", `{"multi_last":["k.a","k.b"]}`)
		if seqsOf(msgs) != "[3 5]" || headerList(msgs, "Nats-Num-Pending") != "[1 0]" ||
			headerList(msgs, "Nats-Last-Sequence") != "[0 3]" || headerList(msgs, "Nats-Subject") != "[k.a k.b]" {
			t.Errorf("two subjects: %s %s %s", seqsOf(msgs), headerList(msgs, "Nats-Num-Pending"), headerList(msgs, "Nats-Last-Sequence"))
		}
		checkEOB(t, "two subjects", end, "0", "5", "6")

		// Wildcards, a subject named twice counted once.
		msgs, end = directMany(t, nc, "K", `{"multi_last":["k.c.*","k.>","k.a"]}`)
		if seqsOf(msgs) != "[3 4 5 6]" {
			t.Errorf("wildcards: %s", seqsOf(msgs))
		}
		checkEOB(t, "wildcards", end, "0", "6", "6")

		// up_to_seq: the last of each subject at or below it.
		msgs, end = directMany(t, nc, "K", `{"multi_last":["k.>"],"up_to_seq":3}`)
		if seqsOf(msgs) != "[2 3]" {
			t.Errorf("up_to_seq 3: %s", seqsOf(msgs))
		}
		checkEOB(t, "up_to_seq 3", end, "0", "3", "3")

		// up_to_time: the messages stored before it.
		at := msgTime(t, nc, "K", 4)
		want, upTo := "[2 3]", "3"
		if msgTime(t, nc, "K", 3).Equal(at) {
			want, upTo = "[2]", "2" // two appends within one clock tick
		}
		msgs, end = directMany(t, nc, "K", fmt.Sprintf(`{"multi_last":["k.>"],"up_to_time":%q}`, at.Format(time.RFC3339Nano)))
		if seqsOf(msgs) != want {
			t.Errorf("up_to_time: %s, want %s", seqsOf(msgs), want)
		}
		checkEOB(t, "up_to_time", end, "0", upTo, upTo)
		_, end = directMany(t, nc, "K", `{"multi_last":["k.>"],"up_to_time":"2001-01-01T00:00:00Z"}`)
		checkStatus(t, "up_to_time before the stream", end, "404", "No Results")

		// seq skips the older results; they still count as pending.
		msgs, end = directMany(t, nc, "K", `{"multi_last":["k.>"],"seq":5}`)
		if seqsOf(msgs) != "[5 6]" || headerList(msgs, "Nats-Num-Pending") != "[1 0]" || headerList(msgs, "Nats-Last-Sequence") != "[0 5]" {
			t.Errorf("seq 5: %s %s", seqsOf(msgs), headerList(msgs, "Nats-Num-Pending"))
		}
		checkEOB(t, "seq 5", end, "0", "6", "6")

		// batch and max_bytes cut the reply short.
		msgs, end = directMany(t, nc, "K", `{"multi_last":["k.>"],"batch":2}`)
		if seqsOf(msgs) != "[3 4]" {
			t.Errorf("batch 2: %s", seqsOf(msgs))
		}
		checkEOB(t, "batch 2", end, "2", "4", "6")
		msgs, end = directMany(t, nc, "K", `{"multi_last":["k.>"],"max_bytes":1}`)
		if seqsOf(msgs) != "[3]" {
			t.Errorf("max_bytes: %s", seqsOf(msgs))
		}
		checkEOB(t, "max_bytes", end, "3", "3", "6")

		// Nothing matching, or an invalid filter: 404 No Results.
		for _, body := range []string{`{"multi_last":["x.>"]}`, `{"multi_last":["k..a"]}`} {
			_, end = directMany(t, nc, "K", body)
			checkStatus(t, body, end, "404", "No Results")
		}
		// Options that do not go together.
		for _, body := range []string{
			`{"multi_last":["k.a"],"next_by_subj":"k.a"}`,
			`{"multi_last":["k.a"],"last_by_subj":"k.a"}`,
			`{"multi_last":["k.a"],"up_to_seq":3,"up_to_time":"2001-01-01T00:00:00Z"}`,
			`{"last_by_subj":"k.a","batch":2}`,
			`{"seq":1,"start_time":"2001-01-01T00:00:00Z"}`,
		} {
			_, end = directMany(t, nc, "K", body)
			checkStatus(t, body, end, "408", "Bad Request")
		}
	})
}

// TestDirectGetMultiLastTooMany: more than 1024 subjects is a 413.
func TestDirectGetMultiLastTooMany(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "M", Subjects: []string{"m.>"}, AllowDirect: true, Storage: njs.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < maxMultiLast+1; i++ {
		if _, err := js.PublishAsync(fmt.Sprintf("m.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("publishes not acknowledged")
	}
	_, end := directMany(t, nc, "M", `{"multi_last":["m.*"]}`)
	checkStatus(t, "1025 subjects", end, "413", "Too Many Results")
	// Exactly the limit is answered.
	msgs, end := directMany(t, nc, "M", fmt.Sprintf(`{"multi_last":["m.*"],"up_to_seq":%d}`, maxMultiLast))
	if len(msgs) != maxMultiLast {
		t.Errorf("1024 subjects: %d messages", len(msgs))
	}
	checkEOB(t, "1024 subjects", end, "0", strconv.Itoa(maxMultiLast), strconv.Itoa(maxMultiLast))
}

// TestDirectGetBatchOddNumbers: the batch numbers nats-server reads its own
// way. A negative batch is still a batch request that sends no message:
// only the EOB with the pending count. A negative max_bytes is a budget
// already spent: a batch of 1e9 (or a multi_last) stops after its first
// message instead of sending the whole stream.
func TestDirectGetBatchOddNumbers(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		subj := "s.a"
		if i%2 == 0 {
			subj = "s.b"
		}
		if _, err := js.Publish(ctxT(t), subj, []byte("msg-"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	msgs, end := directMany(t, nc, "S", `{"seq":1,"batch":-1}`)
	if len(msgs) != 0 {
		t.Errorf("batch -1 sent messages %s", seqsOf(msgs))
	}
	checkEOB(t, "batch -1", end, "10", "0", "")

	msgs, end = directMany(t, nc, "S", `{"seq":1,"batch":1000000000,"max_bytes":-1}`)
	if seqsOf(msgs) != "[1]" {
		t.Errorf("batch 1e9 max_bytes -1: %s", seqsOf(msgs))
	}
	checkEOB(t, "batch 1e9 max_bytes -1", end, "9", "1", "")

	msgs, end = directMany(t, nc, "S", `{"multi_last":["s.a","s.b"],"max_bytes":-1}`)
	if seqsOf(msgs) != "[9]" {
		t.Errorf("multi_last max_bytes -1: %s", seqsOf(msgs))
	}
	checkEOB(t, "multi_last max_bytes -1", end, "1", "9", "10")
}
