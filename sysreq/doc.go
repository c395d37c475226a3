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
// It also publishes $SYS.ACCOUNT.<account>.CONNECT and .DISCONNECT,
// nats-server's io.nats.server.advisory.v1.client_connect and
// client_disconnect events, for every client connection (routes are not
// clients), to subscribers on any server of the cluster, and answers
// $SYS.REQ.USER.INFO in every account (userinfo.go).
//
// Who may ask: with accounts, the requests are served and the events
// published in the system account (Options.Account), which only its users
// reach. Without accounts, anyone may ask when there is no
// authentication; with authentication, RestrictAuth denies publishing and
// subscribing to $SYS.> to every user whose publish permissions do not
// explicitly allow a subject under $SYS (an allow entry whose first token
// is "$SYS"); the origin server refuses the request (or the subscription)
// with the usual permissions violation before it reaches any server.
package sysreq
