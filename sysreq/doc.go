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
// Who may ask: as with nats-server, the server requests, the account
// requests and the $SYS.SERVER and $SYS.ACCOUNT events live in the system
// account (Options.Account) alone, so only its users reach them. jetwal
// serve, like nats-server, always has a system account: "$SYS", with no
// users, when none is configured, and then nobody reaches them. Every other account gets what
// nats-server imports into it (imports.go): $SYS.REQ.SERVER.PING.CONNZ and
// $SYS.REQ.ACCOUNT.PING.CONNZ answer with the asker's own account's
// connections, $SYS.REQ.ACCOUNT.PING.STATZ with its statistics, and
// $SYS.REQ.USER.INFO with the asker's identity; any other $SYS.REQ
// subject has no responders there. The accounts the requests report come
// from monitor.AccountSource.
package sysreq
