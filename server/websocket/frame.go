package websocket

import (
	"encoding/binary"
	"unicode/utf8"
)

// Opcodes (RFC 6455 §5.2). Part of the wire format.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// Bits of the first two header bytes. Part of the wire format.
const (
	bitFin  = 0x80 // last frame of a message
	bitRSV1 = 0x40 // the message is compressed (RFC 7692 §6)
	bitRSV2 = 0x20
	bitRSV3 = 0x10
	bitMask = 0x80 // second byte: a masking key follows the length
)

const (
	// maxControlPayload bounds the payload of close, ping and pong.
	maxControlPayload = 125
	// maxHeader is the longest frame header: 2 bytes, an 8-byte length
	// and a 4-byte masking key.
	maxHeader = 14
	// compressThreshold: server messages up to this size are sent
	// uncompressed even when compression was negotiated (nats-server's
	// threshold).
	compressThreshold = 64
	// browserFrameSize is the payload size server frames are cut to for
	// a browser (a User-Agent starting "Mozilla/"), as nats-server does.
	browserFrameSize = 4096
)

// Close status codes (RFC 6455 §7.4.1) the server sends.
const (
	CloseNormal          = 1000
	CloseGoingAway       = 1001
	CloseProtocolError   = 1002
	CloseInvalidData     = 1007
	ClosePolicyViolation = 1008
	CloseMessageTooBig   = 1009
	CloseInternalError   = 1011
	CloseTLSHandshake    = 1015 // never sent in a frame; mapped to CloseGoingAway
	closeNoStatus        = 1005 // a close frame without a status: none is echoed
)

// header is one decoded frame header.
type header struct {
	fin     bool
	rsv1    bool
	opcode  byte
	masked  bool
	length  uint64
	maskKey [4]byte
}

// isControl reports a close, ping or pong opcode.
func isControl(op byte) bool { return op >= opClose }

// appendHeader appends a server frame header (never masked): op is 0 for
// a continuation frame.
func appendHeader(b []byte, fin, rsv1 bool, op byte, length int) []byte {
	b0 := op
	if fin {
		b0 |= bitFin
	}
	if rsv1 {
		b0 |= bitRSV1
	}
	switch {
	case length <= 125:
		return append(b, b0, byte(length))
	case length < 1<<16:
		b = append(b, b0, 126)
		return binary.BigEndian.AppendUint16(b, uint16(length))
	default:
		b = append(b, b0, 127)
		return binary.BigEndian.AppendUint64(b, uint64(length))
	}
}

// closePayload is the payload of a close frame: the status in network
// order and a reason cut to fit a control frame (with "..." when cut).
func closePayload(status int, reason string) []byte {
	if len(reason) > maxControlPayload-2 {
		reason = reason[:maxControlPayload-5]
		for !utf8.ValidString(reason) { // do not cut a rune in half
			reason = reason[:len(reason)-1]
		}
		reason += "..."
	}
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(reason)), uint16(status))
	return append(b, reason...)
}

// validCloseStatus reports a status a peer may send (RFC 6455 §7.4).
func validCloseStatus(code int) bool {
	switch {
	case code < 1000 || code >= 5000:
		return false
	case code == 1004 || code == closeNoStatus || code == 1006 || code == CloseTLSHandshake:
		return false
	case code >= 1016 && code <= 2999:
		return false
	}
	return true
}

// unmask XORs b with key, starting at key position pos; it returns the
// position after b.
func unmask(b []byte, key [4]byte, pos int) int {
	if len(b) >= 16 { // eight bytes at a time
		var k8 [8]byte
		for i := range k8 {
			k8[i] = key[(pos+i)&3]
		}
		km := binary.LittleEndian.Uint64(k8[:])
		n := len(b) &^ 7
		for i := 0; i < n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^km)
		}
		b = b[n:] // n is a multiple of 4: pos is unchanged
	}
	for i := range b {
		b[i] ^= key[pos&3]
		pos++
	}
	return pos & 3
}
