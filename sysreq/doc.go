// Package sysreq answers nats-server's server requests over NATS, so that
// the nats CLI's `server ls`, `server info`, `server report jetstream`,
// `server check jetstream` and `account report connections` work against
// jetwal:
//
//	$SYS.REQ.SERVER.PING                  statsz of every server
//	$SYS.REQ.SERVER.PING.<KIND>           KIND of every server
//	$SYS.REQ.SERVER.<server id>.<KIND>    KIND of one server
//
// with KIND one of STATSZ, VARZ, JSZ, CONNZ, HEALTHZ, SUBSZ, ROUTEZ, IDZ.
// Answers use nats-server's envelope ({"server": {...}, "data": {...}} or
// "error") and the documents the HTTP monitor serves (package monitor
// builds both). The subscriptions are announced to the routes, so in a
// cluster a PING reaches, and is answered by, every server.
//
// It also publishes $SYS.ACCOUNT.$G.CONNECT and .DISCONNECT, nats-server's
// io.nats.server.advisory.v1.client_connect and client_disconnect events,
// for every client connection (routes are not clients), to subscribers on
// any server of the cluster.
//
// Who may ask: jetwal has one account, so there is no separate system
// account. Without authentication anyone may ask, as anyone may do
// anything. With authentication, RestrictAuth denies publishing and
// subscribing to $SYS.> to every user whose publish permissions do not
// explicitly allow a subject under $SYS (an allow entry whose first token
// is "$SYS"); the origin server refuses the request (or the subscription)
// with the usual permissions violation before it reaches any server.
package sysreq
