package archive

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// recorder is a Sink that keeps what it receives.
type recorder struct {
	hdr  Header
	msgs []store.Msg
	cons []Consumer
}

func (r *recorder) Header(h *Header) error { r.hdr = *h; return nil }
func (r *recorder) Msg(m *store.Msg) error {
	c := *m
	c.Header, c.Data = bytes.Clone(m.Header), bytes.Clone(m.Data)
	r.msgs = append(r.msgs, c)
	return nil
}
func (r *recorder) Consumer(c *Consumer) error { r.cons = append(r.cons, *c); return nil }

func sample(t testing.TB) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, err := range []error{
		w.Header(&Header{Format: Format, Config: api.StreamConfig{Name: "F"}, FirstSeq: 1, LastSeq: 3, Msgs: 2}),
		w.Msg(&store.Msg{Seq: 1, Time: 7, Subject: "a", Data: []byte("x")}),
		w.Msg(&store.Msg{Seq: 3, Subject: "b", Header: []byte("NATS/1.0\r\n\r\n")}),
		w.Consumer(&Consumer{Name: "C", Meta: []byte(`{}`), State: []byte{1, 2, 3}}),
		w.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestRoundTrip: what Writer writes, Read gives back in order; a cut
// archive is ErrMalformed.
func TestRoundTrip(t *testing.T) {
	b := sample(t)
	var r recorder
	if err := Read(bytes.NewReader(b), &r); err != nil {
		t.Fatal(err)
	}
	if r.hdr.Config.Name != "F" || r.hdr.FirstSeq != 1 || r.hdr.LastSeq != 3 || r.hdr.Msgs != 2 {
		t.Fatalf("header %+v", r.hdr)
	}
	if len(r.msgs) != 2 || r.msgs[0].Seq != 1 || r.msgs[0].Time != 7 || string(r.msgs[0].Data) != "x" ||
		r.msgs[1].Seq != 3 || r.msgs[1].Subject != "b" || string(r.msgs[1].Header) != "NATS/1.0\r\n\r\n" {
		t.Fatalf("messages %+v", r.msgs)
	}
	if len(r.cons) != 1 || r.cons[0].Name != "C" || string(r.cons[0].Meta) != "{}" || !slices.Equal(r.cons[0].State, []byte{1, 2, 3}) {
		t.Fatalf("consumers %+v", r.cons)
	}
	if err := Read(bytes.NewReader(b[:len(b)/2]), &recorder{}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("cut archive: %v", err)
	}
}

// FuzzReadArchive: any input decodes to an error or to content, never a
// panic. The seeds are a real archive and cuts and flips of it.
func FuzzReadArchive(f *testing.F) {
	good := sample(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	f.Add(flipped)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Read(bytes.NewReader(b), nopSink{})
	})
}

type nopSink struct{}

func (nopSink) Header(*Header) error     { return nil }
func (nopSink) Msg(*store.Msg) error     { return nil }
func (nopSink) Consumer(*Consumer) error { return nil }
