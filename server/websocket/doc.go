// Package websocket is the WebSocket transport of jetwal's client
// listener (RFC 6455, with permessage-deflate from RFC 7692): the HTTP/1.1
// upgrade, and a Conn that turns the client's frames into a byte stream
// and the server's bytes into frames, so package server runs the NATS
// client protocol over it exactly as over TCP. It follows nats-server
// v2.15's websocket.go in what it accepts and answers; it imports nothing
// from jetwal.
//
// # Who can reach it
//
// Anyone who can reach the websocket port (websocket { host, port }) can
// open a connection; TLS (wss://) is required unless the configuration
// says no_tls. What a connection may then do is decided by package server
// as for any client: the NATS CONNECT is authenticated (the client
// listener's users, or the websocket block's override), permissions and
// accounts apply, and max_connections counts both listeners. Origin
// checks (same_origin, allowed_origins) only protect browser users from
// other sites' pages: a non-browser client sends any Origin it likes, so
// they are no access control. Everything before CONNECT is bounded: the
// upgrade request is at most 64 KiB and must arrive within the
// handshake timeout (set by the server on the socket).
//
// # Handshake
//
// The request must be GET, with Host, "Upgrade: websocket", "Connection:
// Upgrade", a Sec-WebSocket-Key of 16 bytes in base64 and
// "Sec-WebSocket-Version: 13"; a path ending in /mqtt or /leafnode is
// answered 404 (jetwal has neither), a refused origin 403, a method other
// than GET 405, anything else malformed 400. The answer is
//
//	HTTP/1.1 101 Switching Protocols
//	Upgrade: websocket
//	Connection: Upgrade
//	Sec-WebSocket-Accept: base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
//	[Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover]
//	[Nats-No-Masking: true]
//	[configured headers]
//
// Compression is accepted when configured and offered; both sides then
// deflate each message on its own. Nats-No-Masking is nats-server's
// extension for non-browser clients (a browser cannot set the header):
// when asked for, client frames come unmasked; otherwise an unmasked
// client frame is a protocol error.
//
// # Frames
//
//	 byte 0          byte 1          [2 or 8 bytes]   [4 bytes]
//	+-+-+-+-+-------+-+-------------+----------------+-----------+---------
//	|F|R|R|R| opcode|M| length 0-125|  126: 16-bit   | masking   | payload
//	|I|S|S|S|  4    |A| 126, 127    |  127: 64-bit   | key (M=1) |
//	|N|V|V|V|       |S|             |  length, BE    |           |
//	| |1|2|3|       |K|             |                |           |
//	+-+-+-+-+-------+-+-------------+----------------+-----------+---------
//
// Opcodes: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong.
// The client's data messages (text or binary, in any number of frames)
// are one NATS byte stream; RSV1 on a message's first frame marks it
// compressed. The server sends unmasked binary messages, one per flush of
// its outbound queue (cut into 4 KiB frames for browsers, whose
// User-Agent starts "Mozilla/"), compressed above 64 bytes when
// negotiated. Pings are answered with a pong of the same payload; a close
// is answered with a close echoing its status, and the stream ends.
//
// A frame that breaks the RFC — RSV2 or RSV3 set, RSV1 without
// compression or on a continuation, a missing mask, an unknown opcode, a
// control frame over 125 bytes or fragmented, a continuation with no
// message open or a new message inside one, a 64-bit length with the top
// bit set, a close with a 1-byte payload or an invalid status — is
// answered with close 1002 and its reason; invalid deflate data or a
// non-UTF-8 close reason with 1007; a compressed message over
// Options.MaxMessage, compressed or inflated, with 1009. The read side
// then returns a *ProtocolError. A data frame's length needs no bound of
// its own: its payload is streamed to the NATS parser, which enforces
// max_payload. When the server ends a connection it sends a close with
// nats-server's status for the reason (1000 client closed, 1001 going
// away, 1002 protocol error, 1008 policy: authentication, limits, slow
// consumer; 1009 max_payload; 1011 otherwise), then waits at most a
// second for the client to close first.
//
// # Source files
//
//   - doc.go: this overview.
//   - handshake.go: Accept, the upgrade request and answer, CheckHeader.
//   - origin.go: the origin policy (same_origin, allowed_origins).
//   - frame.go: opcodes, header bits, close statuses, masking.
//   - conn.go: Conn: reading frames as a stream, writing messages, close.
//   - compress.go: permessage-deflate: deflating messages, inflating them
//     as they arrive.
package websocket
