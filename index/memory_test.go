package index

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// fillIndex adds n messages of recSize bytes each, subject i%subjects,
// rolling to a new segment every 64 MiB as the store does.
func fillIndex(n, subjects int, recSize uint32) *Index {
	x := New()
	names := make([]string, subjects)
	for i := range names {
		names[i] = fmt.Sprintf("orders.region%d.item", i)
	}
	seg, off := SegID(1), uint32(32)
	for i := 0; i < n; i++ {
		if off+recSize > 64<<20 {
			seg, off = seg+1, 32
		}
		x.Add(uint64(i+1), Loc{Seg: seg, Off: off}, names[i%subjects])
		off += recSize
	}
	return x
}

// TestIndexBytesPerMessage holds the index to its memory budget, by its own
// accounting (MemBytes), with 128-byte payloads (records of about 176
// bytes). The goal is at most 8 bytes of heap per message with one subject;
// the packed form gives under 2, which is what keeps a 100-million-message
// store under 256 MiB after a restart, so that is asserted too.
func TestIndexBytesPerMessage(t *testing.T) {
	const n = 2_000_000
	x := fillIndex(n, 1, 176)
	per := float64(x.MemBytes()) / n
	t.Logf("1 subject, %d messages: %.3f B/msg (sequences %.3f, subjects %.3f)",
		n, per, float64(x.Seqs.MemBytes())/n, float64(x.Subj.MemBytes())/n)
	if per > 8 {
		t.Fatalf("index uses %.2f B/msg with one subject, goal <= 8", per)
	}
	if per > 2 {
		t.Fatalf("index uses %.2f B/msg with one subject and small records, want <= 2 (small packing lost?)", per)
	}
}

// TestIndexBytesManySubjects checks the cost of many subjects: 10,000
// subjects over 1M messages (100 each, interleaved, so each list entry is
// a two-byte delta) stay within 8 bytes per message. Here a subject's cost
// is mostly its sequence list; the fixed part is held to 48 bytes by
// TestSubjectBytesPerSubject.
func TestIndexBytesManySubjects(t *testing.T) {
	const n, subjects = 1_000_000, 10_000
	x := fillIndex(n, subjects, 176)
	per := float64(x.MemBytes()) / n
	t.Logf("%d subjects, %d messages: %.2f B/msg, subject index %.1f B/subject", subjects, n,
		per, float64(x.Subj.MemBytes())/subjects)
	if per > 8 {
		t.Fatalf("index uses %.2f B/msg with %d subjects, want <= 8", per, subjects)
	}
}

// TestEncodedSizeExact checks that Encode's buffer estimate is exact (a
// short one would regrow a buffer as large as the index).
func TestEncodedSizeExact(t *testing.T) {
	x := fillIndex(50_000, 7, 176)
	for s := uint64(1); s < 50_000; s += 13 {
		x.Remove(s, fmt.Sprintf("orders.region%d.item", (s-1)%7))
	}
	trailer := []byte("trailer bytes")
	b := Encode(x, trailer)
	if want := encodedSize(x, trailer, false); len(b) != want || cap(b) != want {
		t.Fatalf("encoded %d bytes (cap %d), encodedSize says %d", len(b), cap(b), want)
	}
}

// failWriter accepts limit bytes, then fails.
type failWriter struct{ n, limit int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		return 0, errors.New("disk full")
	}
	w.n += len(p)
	return len(p), nil
}

// TestEncodeToStreams checks that EncodeTo writes what Encode returns (one
// subject: with several, map order varies between encodings), in pieces no
// larger than its buffer, that a checkpoint of several subjects decodes to
// the same summaries, and that a failing writer is reported.
func TestEncodeToStreams(t *testing.T) {
	x := fillIndex(300_000, 1, 176)
	want := Encode(x, []byte("t"))
	var got bytes.Buffer
	pieces := &pieceWriter{w: &got}
	n, err := EncodeTo(pieces, x, []byte("t"))
	if err != nil || n != int64(len(want)) || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("EncodeTo wrote %d bytes (err %v), differs from Encode's %d", n, err, len(want))
	}
	if pieces.largest > encodeBuf {
		t.Fatalf("EncodeTo wrote a piece of %d bytes, buffer is %d", pieces.largest, encodeBuf)
	}
	many := fillIndex(100_000, 9, 176)
	got.Reset()
	if _, err := EncodeTo(&got, many, nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := Decode("mem", got.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	many.Subj.Each("", func(name string, info SubjectInfo) {
		if b, ok := back.Subj.Get(name); !ok || b != info {
			t.Fatalf("subject %s: decoded %+v %v, want %+v", name, b, ok, info)
		}
	})
	if back.Subj.Len() != 9 || back.Seqs.Len() != 100_000 {
		t.Fatalf("decoded %d subjects, %d messages", back.Subj.Len(), back.Seqs.Len())
	}
	if _, err := EncodeTo(&failWriter{limit: len(want) / 2}, x, nil); err == nil {
		t.Fatal("EncodeTo to a failing writer reported no error")
	}
}

type pieceWriter struct {
	w       *bytes.Buffer
	largest int
}

func (p *pieceWriter) Write(b []byte) (int, error) {
	p.largest = max(p.largest, len(b))
	return p.w.Write(b)
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSubjectBytesPerSubject holds the subject index to 48 bytes of heap
// per subject apart from the name's own bytes, with 1M subjects of one
// message each (a KV bucket's keys), both by MemBytes and by the heap the
// runtime reports. The totals with names are logged.
func TestSubjectBytesPerSubject(t *testing.T) {
	const n = 1_000_000
	h0 := heapInUse()
	x := NewSubjects()
	var name []byte
	for i := range n {
		name = fmt.Appendf(name[:0], "kv.bucket.key-%07d", i)
		x.AddBytes(name, uint64(i+1))
	}
	heap := float64(heapInUse() - h0)
	names := float64(x.NameBytes())
	mem := float64(x.MemBytes())
	t.Logf("%d subjects of one message, names %.0f B each: MemBytes %.1f B/subject (%.1f without names), heap %.1f B/subject (%.1f without names)",
		n, names/n, mem/n, (mem-names)/n, heap/n, (heap-names)/n)
	if over := (mem - names) / n; over > 48 {
		t.Fatalf("subject index overhead %.1f B/subject by MemBytes, want <= 48", over)
	}
	if over := (heap - names) / n; over > 48 {
		t.Fatalf("subject index overhead %.1f B/subject by heap, want <= 48", over)
	}
	runtime.KeepAlive(x)
}
