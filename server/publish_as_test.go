package server

import (
	"bytes"
	"testing"
)

// TestPresentedSubjectRoundTrip: the subject PublishAs presents survives a
// route hop and leaves the message's own header exactly as it was (none,
// plain, or a status line).
func TestPresentedSubjectRoundTrip(t *testing.T) {
	for _, hdr := range [][]byte{
		nil,
		[]byte("NATS/1.0\r\nNats-Msg-Id: 7\r\n\r\n"),
		[]byte("NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\n\r\n"),
	} {
		subj, own, ok := takePresented(withPresented(hdr, "orders.new x"))
		if !ok || subj != "orders.new x" || !bytes.Equal(own, hdr) || (hdr == nil) != (own == nil) {
			t.Errorf("%q: got %q %q %v", hdr, subj, own, ok)
		}
	}
	// A header from elsewhere is left alone.
	for _, hdr := range [][]byte{[]byte("NATS/1.0\r\nA: b\r\n\r\n"), []byte("NATS/1.0\r\nJetwal-Present: x\r\n\r\n"), []byte("garbage")} {
		if _, own, ok := takePresented(hdr); ok || !bytes.Equal(own, hdr) {
			t.Errorf("%q taken", hdr)
		}
	}
}
