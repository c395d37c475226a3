package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

var appendTests = []suiteTest{
	{"Append/RoundTrip", testAppendRoundTrip},
	{"Append/InvalidSubject", testAppendInvalidSubject},
	{"Append/WildcardTokensLiteral", testAppendWildcardTokensLiteral},
	{"Append/CopiesInput", testAppendCopiesInput},
	{"Append/SequencesAndTimes", testAppendSequencesAndTimes},
}

func testAppendRoundTrip(t *testing.T, open openFunc) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	cases := []struct {
		name      string
		subj      string
		hdr, data []byte
	}{
		{"plain", "orders.new", nil, []byte("hello")},
		{"header", "orders.new", []byte("NATS/1.0\r\nNats-Msg-Id: 42\r\n\r\n"), []byte("with header")},
		{"header-only", "a", []byte("NATS/1.0\r\nX: y\r\n\r\n"), nil},
		{"empty", "a.b", nil, nil},
		{"empty-slices", "a.b", []byte{}, []byte{}},
		{"binary", "bin", nil, []byte{0, 1, 2, 0xff, 0, '\r', '\n'}},
		{"many-tokens", "a.b.c.d.e.f.g.h.i.j", nil, []byte("x")},
		{"literal-star-inside-token", "a*b.c>d", nil, []byte("x")},
		{"long-subject", string(bytes.Repeat([]byte("s"), 500)), nil, []byte("x")},
		{"1MiB", "big", []byte("NATS/1.0\r\n\r\n"), big},
	}
	h := newHarness(t, open, store.Limits{})
	var bytesWant uint64
	for i, c := range cases {
		before := time.Now()
		seq, ts, err := h.s.Append(c.subj, c.hdr, c.data)
		after := time.Now()
		if err != nil {
			t.Fatalf("%s: Append: %v", c.name, err)
		}
		if seq != uint64(i+1) {
			t.Fatalf("%s: seq %d, want %d", c.name, seq, i+1)
		}
		if ts < before.Add(-time.Second).UnixNano() || ts > after.Add(time.Second).UnixNano() {
			t.Fatalf("%s: time %v not near the append (%v..%v)", c.name, time.Unix(0, ts), before, after)
		}
		m := h.load(seq)
		want := store.Msg{Seq: seq, Time: ts, Subject: c.subj, Header: c.hdr, Data: c.data}
		if !EqualMsg(&m, &want) {
			t.Fatalf("%s: Load = %s, want %s", c.name, FormatMsg(&m), FormatMsg(&want))
		}
		bytesWant += store.SizeFunc(h.s)(c.subj, c.hdr, c.data)
	}
	h.wantState(store.State{Msgs: uint64(len(cases)), Bytes: bytesWant, FirstSeq: 1, LastSeq: uint64(len(cases)), NumSubjects: 8})
	h.check()
}

func testAppendInvalidSubject(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	h.fill("ok")
	for _, subj := range []string{
		"", "foo..bar", ".foo", "foo.", "foo bar", "foo\tbar", "foo\r\nbar", "foo\nbar", ".",
	} {
		_, _, err := h.s.Append(subj, nil, []byte("x"))
		wantErr(t, "Append("+subj+")", err, store.ErrInvalidSubject)
		called := false
		err = h.s.AppendAsync(subj, nil, []byte("x"), func(uint64, int64, error) { called = true })
		wantErr(t, "AppendAsync("+subj+")", err, store.ErrInvalidSubject)
		if called {
			t.Fatalf("AppendAsync(%q) called done after refusing", subj)
		}
	}
	h.wantState(store.State{Msgs: 1, Bytes: h.size("ok", 0, len(payload("ok", 0))), FirstSeq: 1, LastSeq: 1, NumSubjects: 1})
	if seq := h.append("ok", nil, nil); seq != 2 {
		t.Fatalf("append after refusals got seq %d, want 2", seq)
	}
}

func testAppendCopiesInput(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	subjBuf := []byte("copy.me")
	hdr := []byte("NATS/1.0\r\nA: 1\r\n\r\n")
	data := []byte("original")
	seq1 := h.append(string(subjBuf), hdr, data)
	done := make(chan uint64, 1)
	if err := h.s.AppendAsync(string(subjBuf), hdr, data, func(seq uint64, _ int64, err error) {
		if err != nil {
			t.Errorf("done: %v", err)
		}
		done <- seq
	}); err != nil {
		t.Fatalf("AppendAsync: %v", err)
	}
	for i := range hdr {
		hdr[i] = 'X'
	}
	for i := range data {
		data[i] = 'Y'
	}
	copy(subjBuf, "zzzz.zz")
	seq2 := waitDone(t, done)
	for _, seq := range []uint64{seq1, seq2} {
		m := h.load(seq)
		if m.Subject != "copy.me" || string(m.Header) != "NATS/1.0\r\nA: 1\r\n\r\n" || string(m.Data) != "original" {
			t.Fatalf("seq %d changed with the caller's buffers: %s", seq, FormatMsg(&m))
		}
	}
	// The loaded slices belong to the caller too.
	m := h.load(seq1)
	m.Data[0] = '!'
	m.Header[0] = '!'
	if again := h.load(seq1); string(again.Data) != "original" || again.Header[0] != 'N' {
		t.Fatalf("changing a loaded Msg changed the store: %s", FormatMsg(&again))
	}
}

func testAppendSequencesAndTimes(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	var prevTs int64
	for i := 1; i <= 200; i++ {
		seq, ts, err := h.s.Append("t", nil, []byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		if seq != uint64(i) {
			t.Fatalf("append %d got seq %d", i, seq)
		}
		if ts < prevTs {
			t.Fatalf("seq %d time %d before previous %d", seq, ts, prevTs)
		}
		prevTs = ts
		if m := h.load(seq); m.Time != ts {
			t.Fatalf("seq %d: Append returned time %d, Load has %d", seq, ts, m.Time)
		}
	}
	st := h.s.State()
	if first := h.load(1); st.FirstTime.UnixNano() != first.Time {
		t.Fatalf("FirstTime %v, seq 1 at %d", st.FirstTime, first.Time)
	}
	if st.LastTime.UnixNano() != prevTs {
		t.Fatalf("LastTime %v, last append at %d", st.LastTime, prevTs)
	}
	h.check()
}

// waitDone receives one sequence from an AppendDone channel, failing after
// a generous deadline.
func waitDone(t testing.TB, ch <-chan uint64) uint64 {
	t.Helper()
	select {
	case seq := <-ch:
		return seq
	case <-time.After(doneTimeout):
		t.Fatalf("AppendDone not called within %v", doneTimeout)
		return 0
	}
}

// doneTimeout bounds every wait for an asynchronous event; it is a failure
// deadline, not a synchronisation delay.
const doneTimeout = 20 * time.Second

// testAppendWildcardTokensLiteral: a subject with wildcard tokens is stored
// as it came (nats-server stores such a publish outside pedantic mode); a
// wildcard filter matches it, a literal filter only itself.
func testAppendWildcardTokensLiteral(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	star := h.append("orders.*", nil, []byte("star"))
	lit := h.append("orders.new", nil, []byte("literal"))
	tail := h.append("orders.>", nil, []byte("tail"))
	var m store.Msg
	if err := h.s.Load(star, &m); err != nil || m.Subject != "orders.*" || string(m.Data) != "star" {
		t.Fatalf("Load(%d) = %q %q, %v", star, m.Subject, m.Data, err)
	}
	if err := h.s.LoadNext("orders.new", 0, &m); err != nil || m.Seq != lit {
		t.Fatalf("LoadNext(orders.new) = seq %d %v, want %d", m.Seq, err, lit)
	}
	if n := h.s.NumPending(0, "orders.*", false); n != 3 {
		t.Fatalf("NumPending(orders.*) = %d, want 3 (the wildcard matches every token, '*' too)", n)
	}
	if err := h.s.LoadLast("orders.>", &m); err != nil || m.Seq != tail || m.Subject != "orders.>" {
		t.Fatalf("LoadLast(orders.>) = seq %d %q %v", m.Seq, m.Subject, err)
	}
	if st := h.s.SubjectsState("orders.*"); len(st) != 3 || st["orders.*"].Msgs != 1 {
		t.Fatalf("SubjectsState(orders.*) = %v", st)
	}
}
