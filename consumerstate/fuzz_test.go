package consumerstate

import (
	"errors"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// FuzzConsumerStateDecode feeds arbitrary bytes to Decode, both as given
// and resealed (header and checksum fixed up so the body parser sees them).
// Decode must not panic and must return a state that passes Verify and
// survives a round trip, or an error wrapping ErrCorrupt.
func FuzzConsumerStateDecode(f *testing.F) {
	f.Add(Encode(&State{}))
	f.Add(Encode(sampleState(3)))
	f.Add(Encode(sampleState(12)))
	damaged := Encode(sampleState(4))
	damaged[len(damaged)/2] ^= 0x40
	f.Add(damaged)
	f.Add([]byte("JWCS"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, reseal(b)} {
			s, err := Decode(in)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
				continue
			}
			if err := s.Verify(); err != nil {
				t.Fatalf("decoded state fails Verify: %v", err)
			}
			d, err := Decode(Encode(s))
			if err != nil || !d.Equal(s) {
				t.Fatalf("decoded state does not round trip: %v", err)
			}
		}
	})
}

// FuzzConsumerLogReplay feeds arbitrary bytes to the log reader, both as a
// whole log file and as the payload of one well-framed record replayed on a
// state with pending messages. It must not panic; errors must wrap
// ErrCorrupt; a replayed state must pass Verify.
func FuzzConsumerLogReplay(f *testing.F) {
	var j journal
	j.limit = 1 << 20
	var s State
	s.journal = &j
	s.Deliver(1, 1, 5)
	s.Deliver(3, 1, 6)
	s.Deliver(1, 2, 7)
	s.Nak(3, 100)
	s.Ack(1)
	s.AckAll(2)
	s.Term(3)
	s.DeliverNoAck(4)
	s.Reset(9)
	f.Add(j.buf)
	f.Add([]byte{opAck, 2})
	f.Add([]byte{opDeliver, 7, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		base := func() *State {
			var s State
			s.Deliver(1, 1, 1)
			s.Deliver(2, 1, 2)
			return &s
		}
		check := func(st *State, err error) {
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
				return
			}
			if err := st.Verify(); err != nil {
				t.Fatalf("replayed state fails Verify: %v", err)
			}
		}
		if pl, err := parseLog(b, 1, "fuzz.log", opener{}, "c"); err == nil {
			st := base()
			for _, r := range pl.records {
				if err = replay(st, r.payload, r.off); err != nil {
					break
				}
			}
			check(st, err)
		} else {
			check(nil, err)
		}
		framed := appendRecord(logHeader(1, false), xxhash.New(), 1, logHeaderSize, b)
		pl, err := parseLog(framed, 1, "fuzz.log", opener{}, "c")
		if err != nil || len(pl.records) != 1 {
			t.Fatalf("well-framed record not read back: %v", err)
		}
		st := base()
		check(st, replay(st, pl.records[0].payload, pl.records[0].off))
	})
}
