// Package server implements the NATS core client protocol: the TCP
// listener, the per-connection parser and writer, subscription routing, and
// an in-process API through which the JetStream layer serves $JS.API.> and
// delivers messages without a network hop.
//
// # Wire protocol
//
// Every operation is a control line ending in CRLF; PUB and HPUB (and MSG
// and HMSG going out) are followed by a payload of the announced size and
// another CRLF. Operation names are case-insensitive; arguments are separated
// by runs of spaces or tabs, so "SUB subj  1" (nats.go's empty queue) and
// "UNSUB 1 " parse as expected.
//
//	client → server                         server → client
//	CONNECT {json}                          INFO {json} ␠CRLF
//	PUB <subj> [reply] <#bytes>             MSG <subj> <sid> [reply] <#bytes>
//	HPUB <subj> [reply] <#hdr> <#total>     HMSG <subj> <sid> [reply] <#hdr> <#total>
//	SUB <subj> [queue] <sid>                +OK            (verbose only)
//	UNSUB <sid> [max]                       -ERR '<text>'
//	PING / PONG                             PING / PONG
//
// The exact bytes nats-server v2.15.2 sends are documented in
// the project's shared nats-wire reference (PROTOCOL.md); this package follows them:
// the INFO field order and trailing space, the second INFO after the first
// PONG, +OK after CONNECT/SUB/PUB/HPUB/UNSUB when verbose, the 503
// no-responders status, and these -ERR texts:
//
//	'Unknown Protocol Operation'      bad operation or arguments; closes
//	'Maximum Payload Violation'       PUB larger than max_payload; closes
//	'maximum control line exceeded'   line argument over 4096 bytes; closes
//	'Invalid Subject'                 bad SUB subject; connection stays
//	'Invalid Publish Subject'         pedantic clients only; connection stays
//	'Stale Connection'                PINGs unanswered; closes
//	'maximum connections exceeded'    closes
//	'Authorization Violation'         bad credentials, or not CONNECT first; closes
//	'Authentication Timeout'          no CONNECT within AuthTimeout; closes
//	'Permissions Violation for Publish to "<subject>"'       connection stays
//	'Permissions Violation for Subscription to "<subject>"'  connection stays
//
// (nats-server closes silently on malformed PUB/SUB arguments; jetwal sends
// the -ERR line first. Both close a slow consumer silently: see below.)
//
// # Data path
//
// Each connection has one read goroutine and one write goroutine. The reader
// reads into a single reusable buffer (4 KiB, growing to 256 KiB while reads
// fill it, or to one large message's length, and shrinking when reads come
// short) and parses operations in place without allocating (parser.go,
// inbuf.go). A PUB is matched against the sublist
// (package sublist, with a result cache, plus a one-entry memo per
// publisher) and framed as MSG/HMSG into a per-receiver stage: a pooled
// 64 KiB chunk (stage.go, chunk.go). A stage joins the receiver's outbound
// queue, a list of chunks, as a whole: when the next message would not fit
// and at the end of each input chunk; only stages under 4 KiB are copied into
// the queue's last chunk. The reader then wakes every writer it fed. The
// writer takes chunks from the front of the list under the lock, up to 1 MiB
// at a time, and sends them with one vectored write (writev) without holding
// it, so bytes are never copied between framing and the socket, however far
// a receiver falls behind.
//
// A receiver whose queue exceeds Options.MaxPending is a slow consumer: its
// queue is dropped and it is closed without an -ERR (as nats-server does, so
// that clients reconnect instead of taking the error as final); publishers
// never block on its socket. Before that point (above 3/4 of MaxPending, as
// in nats-server, but from 8 MiB at most) a publisher pauses for a few
// milliseconds per input chunk to let a merely slower receiver catch up.
//
// # Security
//
// Authentication goes through the Authenticator interface (authn.go;
// package auth implements it), permissions are compiled per connection into
// sublists (perms.go), and TLS wraps the socket before the read and write
// goroutines start (tls.go). Stats and Connections (stats.go) give the
// monitor its snapshots.
//
// # WebSocket
//
// With Options.Websocket a second listener takes WebSocket clients
// (ws.go; the transport is package websocket): after the TLS handshake
// and the HTTP upgrade, both on the read goroutine and bounded by the
// handshake timeout, the connection is a client like any other, so every
// check above applies to it. Its INFO names the websocket listener's host
// and port; its writer sends each flush as one binary message; when it is
// closed it gets a close frame with nats-server's status for the reason.
//
// # Internal subscriptions
//
// Server.Subscribe registers a Handler that runs synchronously on the
// publishing goroutine; Server.Publish injects a message as if a client had
// published it. Both are used by the JetStream layer.
//
// # Accounts
//
// Every client belongs to one Account (account.go), chosen at CONNECT by
// its identity; $G without accounts. An account has its own sublist (and,
// in a cluster, its own sublist of remote interest), so PUB, SUB,
// delivery and request/reply stay within it; route frames carry the
// account's name. Server.Account(name) returns the in-process client of an
// account (Subscribe, Publish, PublishAs, HasInterest, ...); the Server's
// methods of those names act on $G.
//
// # Locking
//
// Lock order: client.mu (subscriptions by sid, ping timer) before the
// sublist lock; outbound locks and Server.mu are leaves. No lock is held
// while a Handler runs or while a socket is read or written.
package server
