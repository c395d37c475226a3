// Package sysreq answers nats-server's server requests over NATS, so that
// the nats CLI's `server ls`, `server info`, `server report jetstream`
// (with --account), `server request ...`, `server check jetstream`,
// `account report connections` and `account report statistics` work
// against jetwal:
//
//	$SYS.REQ.SERVER.PING                  statsz of every server
//	$SYS.REQ.SERVER.PING.<KIND>           KIND of every server
//	$SYS.REQ.SERVER.<server id>.<KIND>    KIND of one server
//	$SYS.REQ.ACCOUNT.<account>.<AKIND>    AKIND of one account (account.go)
//	$SYS.REQ.ACCOUNT.PING.STATZ           statistics of every account in use
//	$SYS.REQ.ACCOUNT.PING.CONNZ           connections of the asker's account
//
// with KIND one of STATSZ, VARZ, JSZ, CONNZ, HEALTHZ, SUBSZ, ROUTEZ,
// ACCOUNTZ, IDZ and AKIND one of SUBSZ, CONNZ, JSZ, INFO, STATZ. A request
// body carries nats-server's options of its kind (JSZ's accounts, streams,
// consumer, config, ...; HEALTHZ's js-enabled-only, details, ...) and its
// server filter. Answers use nats-server's envelope ({"server": {...},
// "data": {...}} or "error") and the documents the HTTP monitor serves
// (package monitor builds both). The subscriptions are announced to the
// routes, so in a cluster a PING reaches, and is answered by, every
// server.
//
// Every server also broadcasts its statsz on $SYS.SERVER.<id>.STATSZ
// (heartbeat.go) while anyone subscribes to it.
//
// It also publishes $SYS.ACCOUNT.<account>.CONNECT and .DISCONNECT,
// nats-server's io.nats.server.advisory.v1.client_connect and
// client_disconnect events, for every client connection (routes are not
// clients), to subscribers on any server of the cluster, and answers
// $SYS.REQ.USER.INFO in every account (userinfo.go).
//
// Who may ask: with accounts, the requests are served and the events
// published in the system account (Options.Account), which only its users
// reach (the accounts the requests report come from
// monitor.AccountSource). Without accounts, anyone may ask when there is
// no authentication; with authentication, RestrictAuth denies publishing and
// subscribing to $SYS.> to every user whose publish permissions do not
// explicitly allow a subject under $SYS (an allow entry whose first token
// is "$SYS"); the origin server refuses the request (or the subscription)
// with the usual permissions violation before it reaches any server.
package sysreq
