package stream

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestEntryRoundTrip(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want Entry
	}{
		{EncodeAppend("a.b", []byte("NATS/1.0\r\nX: 1\r\n\r\n"), []byte("data"), 42),
			Entry{Op: OpAppend, Time: 42, Subject: "a.b", Header: []byte("NATS/1.0\r\nX: 1\r\n\r\n"), Data: []byte("data")}},
		{EncodeAppend("s", nil, nil, -1), Entry{Op: OpAppend, Time: -1, Subject: "s", Data: []byte{}}},
		{EncodeDelete(7, true), Entry{Op: OpDelete, Seq: 7, Erase: true}},
		{EncodeDelete(8, false), Entry{Op: OpDelete, Seq: 8}},
		{EncodePurge("a.>", 10, 2), Entry{Op: OpPurge, Seq: 10, Keep: 2, Filter: "a.>"}},
		{EncodeCompact(99), Entry{Op: OpCompact, Seq: 99}},
		{EncodeSkip(7), Entry{Op: OpSkip, Seq: 7}},
	} {
		got, err := Decode(c.b)
		if err != nil {
			t.Fatalf("%x: %v", c.b, err)
		}
		if got.Op != c.want.Op || got.Time != c.want.Time || got.Subject != c.want.Subject || !bytes.Equal(got.Header, c.want.Header) ||
			!bytes.Equal(got.Data, c.want.Data) || got.Seq != c.want.Seq || got.Erase != c.want.Erase || got.Filter != c.want.Filter || got.Keep != c.want.Keep {
			t.Fatalf("%x: got %+v, want %+v", c.b, got, c.want)
		}
	}
}

// TestEntryMalformed: every truncation of a valid entry, and unknown ops,
// are errors wrapping ErrEntry, never a panic.
func TestEntryMalformed(t *testing.T) {
	valid := [][]byte{EncodeAppend("a.b", []byte("h"), []byte("d"), 1), EncodeDelete(1, false), EncodePurge("", 1, 1), EncodeCompact(1), EncodeSkip(1)}
	for _, v := range valid {
		for n := 0; n < len(v); n++ {
			if v[0] == byte(OpAppend) && n >= 1+8+1+3+1+1 {
				continue // cuts into the data: still a valid, shorter payload
			}
			if v[0] == byte(OpPurge) && n >= 17 {
				continue // the filter is the rest
			}
			if _, err := Decode(v[:n]); !errors.Is(err, ErrEntry) {
				t.Fatalf("%x cut to %d: %v", v, n, err)
			}
		}
	}
	for _, b := range [][]byte{{0}, {9, 1, 2}, {byte(OpAppend), 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}} {
		if _, err := Decode(b); !errors.Is(err, ErrEntry) {
			t.Fatalf("%x: %v", b, err)
		}
	}
}

func FuzzStreamEntryDecode(f *testing.F) {
	f.Add(EncodeAppend("a", []byte("h"), []byte("d"), 5))
	f.Add(EncodePurge("x.*", 3, 0))
	f.Add(EncodeAppendBatch([]Msg{{Time: 1, Subject: "a", Data: []byte("x")}, {Time: 2, Subject: "b.c", Header: []byte("h"), Data: nil}}))
	f.Add(EncodeAppendBatch([]Msg{{Time: -1, Subject: "", Data: bytes.Repeat([]byte{7}, 200)}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err == nil && e.Op == OpAppend {
			// A decoded append encodes back to the same bytes.
			if again := EncodeAppend(e.Subject, e.Header, e.Data, e.Time); len(e.Header) > 0 && !bytes.Equal(again, b) {
				t.Fatalf("%x re-encodes as %x", b, again)
			}
		}
		if err == nil && e.Op == OpAppendBatch {
			// A batch has one byte form: it encodes back to the same bytes.
			if len(e.Msgs) == 0 {
				t.Fatalf("%x: a batch of no messages decoded", b)
			}
			if again := EncodeAppendBatch(e.Msgs); !bytes.Equal(again, b) {
				t.Fatalf("%x re-encodes as %x", b, again)
			}
		}
	})
}

func TestBatchRoundTrip(t *testing.T) {
	msgs := []Msg{
		{Time: 42, Subject: "a.b", Header: []byte("NATS/1.0\r\nX: 1\r\n\r\n"), Data: []byte("data")},
		{Time: -7, Subject: "", Data: []byte{}},
		{Time: 1 << 62, Subject: string(bytes.Repeat([]byte("s"), 300)), Data: bytes.Repeat([]byte{1}, 70000)},
	}
	var b Batch
	if b.Take() != nil {
		t.Fatal("an empty batch is an entry")
	}
	size := b.Size()
	for _, m := range msgs {
		size += BatchMsgSize(m.Subject, m.Header, m.Data)
		b.Add(m.Subject, m.Header, m.Data, m.Time)
	}
	if b.Len() != len(msgs) || b.Size() != size {
		t.Fatalf("len %d size %d, want %d and %d", b.Len(), b.Size(), len(msgs), size)
	}
	enc := b.Take()
	if b.Len() != 0 || len(enc) != size || !bytes.Equal(enc, EncodeAppendBatch(msgs)) {
		t.Fatalf("take: %d bytes (want %d), batch left with %d", len(enc), size, b.Len())
	}
	e, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if e.Op != OpAppendBatch || len(e.Msgs) != len(msgs) {
		t.Fatalf("decoded %+v", e)
	}
	for i, m := range e.Msgs {
		x := msgs[i]
		if m.Time != x.Time || m.Subject != x.Subject || !bytes.Equal(m.Header, x.Header) || !bytes.Equal(m.Data, x.Data) {
			t.Fatalf("message %d: %+v, want %+v", i, m, x)
		}
	}
	// Every truncation is an error, and so is anything after the last
	// message, a zero count and a count the bytes cannot hold.
	for n := 0; n < len(enc); n++ {
		if _, err := Decode(enc[:n]); !errors.Is(err, ErrEntry) {
			t.Fatalf("cut to %d: %v", n, err)
		}
	}
	for _, bad := range [][]byte{
		append(append([]byte(nil), enc...), 0),
		{byte(OpAppendBatch), 0, 0, 0, 0},
		{byte(OpAppendBatch), 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0},
		{byte(OpAppendBatch), 2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0},
		// a non-shortest length
		{byte(OpAppendBatch), 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0, 0, 0},
	} {
		if _, err := Decode(bad); !errors.Is(err, ErrEntry) {
			t.Fatalf("%x: %v", bad, err)
		}
	}
}

// TestDecodeIntoReuses: batches decoded into one caller's array come out
// whole each time: the array is reused when large enough (no stale header
// from a longer batch before), and a larger batch gets an array of its own.
func TestDecodeIntoReuses(t *testing.T) {
	long := []Msg{{Time: 1, Subject: "a", Header: []byte("H"), Data: []byte("1")}, {Time: 2, Subject: "b", Header: []byte("H2"), Data: []byte("2")}, {Time: 3, Subject: "c", Data: []byte("3")}}
	short := []Msg{{Time: 9, Subject: "z", Data: []byte("9")}}
	var scratch []Msg
	for round, want := range [][]Msg{long, short, long, append(slices.Clone(long), short...)} {
		e, err := DecodeInto(EncodeAppendBatch(want), scratch)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(e.Msgs) != len(want) {
			t.Fatalf("round %d: %d messages, want %d", round, len(e.Msgs), len(want))
		}
		for i, m := range e.Msgs {
			if m.Time != want[i].Time || m.Subject != want[i].Subject || string(m.Header) != string(want[i].Header) || string(m.Data) != string(want[i].Data) {
				t.Fatalf("round %d message %d: %+v, want %+v", round, i, m, want[i])
			}
		}
		reused := cap(scratch) >= len(want)
		if reused && &e.Msgs[0] != &scratch[:1][0] {
			t.Fatalf("round %d: a large enough array was not reused", round)
		}
		if len(e.Msgs) > cap(scratch) {
			scratch = e.Msgs
		}
	}
}
