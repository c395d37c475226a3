package consumerstate

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// sampleState returns a state with pending messages, redeliveries and naks.
func sampleState(n int) *State {
	var s State
	for i := 1; i <= n; i++ {
		s.Deliver(StreamSeq(i*2), 1, int64(1_700_000_000_000_000_000+i*1000))
	}
	for i := 1; i <= n; i += 3 {
		s.Ack(StreamSeq(i * 2))
	}
	for i := 2; i <= n; i += 5 {
		s.Deliver(StreamSeq(i*2), 3, int64(1_700_000_000_000_000_000+i*7000))
	}
	for i := 3; i <= n; i += 7 {
		s.Nak(StreamSeq(i*2), int64(1_700_000_000_000_000_000+i*9000))
	}
	return &s
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, s := range []*State{{}, sampleState(1), sampleState(50), sampleState(3000)} {
		b := Encode(s)
		d, err := Decode(b)
		if err != nil {
			t.Fatalf("pending %d: %v", len(s.Pending), err)
		}
		if !d.Equal(s) {
			t.Fatalf("pending %d: round trip differs", len(s.Pending))
		}
		if err := d.Verify(); err != nil {
			t.Fatal(err)
		}
		// The decoded state must work: ack everything in order.
		for len(d.Pending) > 0 {
			lo, _ := d.minPending()
			d.Ack(lo)
		}
		if d.AckFloor != d.Delivered {
			t.Fatalf("after acking all: floor %+v delivered %+v", d.AckFloor, d.Delivered)
		}
	}
}

func TestEncodedSizeProportionalToPending(t *testing.T) {
	var s State
	for i := 1; i <= 100000; i++ {
		s.Deliver(StreamSeq(i), 1, int64(i)*1000)
		if i > 100 {
			s.Ack(StreamSeq(i - 100))
		}
	}
	if n := len(Encode(&s)); n > snapOverhead+40+100*10 {
		t.Fatalf("100 pending after 100000 deliveries encode to %d bytes", n)
	}
}

func wantCorrupt(t *testing.T, what string, b []byte) {
	t.Helper()
	s, err := Decode(b)
	if err == nil {
		t.Fatalf("%s: decoded without error: %+v", what, s)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: error %v does not wrap ErrCorrupt", what, err)
	}
}

// TestDecodeDamage flips every bit and tries every truncation of an
// encoding: all must be rejected, never panic.
func TestDecodeDamage(t *testing.T) {
	good := Encode(sampleState(20))
	for i := range len(good) * 8 {
		b := append([]byte(nil), good...)
		b[i/8] ^= 1 << (i % 8)
		wantCorrupt(t, "bit flip", b)
	}
	for n := range len(good) {
		wantCorrupt(t, "truncated", good[:n])
	}
	wantCorrupt(t, "extended", append(append([]byte(nil), good...), 0))
	wantCorrupt(t, "nil", nil)
}

// reseal fixes up header length and checksum so that a damaged body
// reaches the body parser.
func reseal(b []byte) []byte {
	if len(b) < snapOverhead {
		return b
	}
	out := append([]byte(nil), b...)
	copy(out, snapMagic)
	out[4] = snapVersion
	out[5], out[6], out[7] = 0, 0, 0
	end := len(out) - snapTrailerSize
	binary.LittleEndian.PutUint32(out[16:], uint32(end-snapHeaderSize))
	binary.LittleEndian.PutUint64(out[end:], xxhash.Sum64(out[:end]))
	return out
}

// TestDecodeDamagedBody damages the body behind a valid checksum: decoding
// must return a state passing Verify or ErrCorrupt.
func TestDecodeDamagedBody(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	good := Encode(sampleState(30))
	accepted := 0
	for i := 0; i < 20000; i++ {
		b := append([]byte(nil), good...)
		switch rng.IntN(3) {
		case 0:
			for range 1 + rng.IntN(3) {
				j := snapHeaderSize + rng.IntN(len(b)-snapOverhead)
				b[j] = byte(rng.Uint32())
			}
		case 1:
			cut := snapHeaderSize + rng.IntN(len(b)-snapOverhead)
			b = append(b[:cut:cut], b[len(b)-snapTrailerSize:]...)
		case 2:
			j := snapHeaderSize + rng.IntN(len(b)-snapOverhead)
			ins := make([]byte, 1+rng.IntN(4))
			for k := range ins {
				ins[k] = byte(rng.Uint32())
			}
			b = append(b[:j:j], append(ins, b[j:]...)...)
		}
		s, err := Decode(reseal(b))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("seed %d: error %v does not wrap ErrCorrupt", seed, err)
			}
			continue
		}
		accepted++
		if err := s.Verify(); err != nil {
			t.Fatalf("seed %d: decoded state fails Verify: %v", seed, err)
		}
	}
	t.Logf("%d of 20000 damaged bodies decoded to valid states", accepted)
}

func TestDecodeNamesOffset(t *testing.T) {
	b := Encode(sampleState(5))
	b[len(b)-1] ^= 0xff
	_, err := Decode(b)
	if err == nil || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v", err)
	}
	if want := "offset"; !contains(err.Error(), want) {
		t.Fatalf("error %q does not name an offset", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
