// Package config reads a server configuration file in nats-server's format
// and maps it to jetwal's settings.
//
// The file is parsed by nats-server's own parser
// (github.com/nats-io/nats-server/v2/conf), so includes, variables
// ($NAME, defined in the file or taken from the environment), blocks,
// arrays, size suffixes (1MB) and comments behave exactly as in
// nats-server. This package walks the parsed map:
//
//   - settings jetwal implements are checked and mapped to Config;
//   - settings nats-server knows but jetwal does not implement are in one
//     of two tables (unsupported.go). A setting whose absence would weaken
//     security (authentication, permissions, TLS of any listener, a TPM
//     for the encryption key, accounts and their exports and imports,
//     operator JWTs, auth callout, rate limits) is refused: Load fails
//     naming the field and what jetwal does not do, rather than run
//     without it. The others produce a Warning naming the field and why
//     ignoring it is safe (below), so an existing file still loads;
//   - unknown names are an error everywhere, as in nats-server v2.15:
//     a misspelled block name (autorization { }) stops the start instead
//     of leaving the server open.
//
// Every error and warning is "file:line:column: reason".
//
// Command-line flags override the file (serve.ParseCommandLine and
// serve.FromConfig merge them using Config.Set, which records the
// settings the file gave).
//
// # Ignored settings
//
// These are the only fields jetwal warns about and ignores (ignoredFields
// in unsupported.go; TestDocListsIgnoredSettings keeps this list
// complete). Ignoring each one is safe for the reason given:
//
//   - top level: gateway; leaf, leafnodes; mqtt; https,
//     https_port; prof_port, prof_block_rate: jetwal opens no such
//     listener and makes no such connection, so nothing is exposed.
//     trace_verbose, trace_headers, max_traced_msg_len, logtime,
//     logtime_utc, syslog, remote_syslog, logfile_size_limit,
//     log_size_limit, logfile_max_num, log_max_num, connect_error_reports,
//     reconnect_error_reports, pidfile, pid_file: the
//     form and destination of logs and status files only.
//     disable_sublist_cache, no_sublist_cache, no_header_support,
//     no_fast_producer_stall, max_closed_clients, write_timeout,
//     server_metadata, feature_flags, http_base_path, client_advertise,
//     default_js_domain, no_system_account, no_system, no_sys_acc:
//     features and tuning that grant or check nothing (a client past
//     write_deadline is always closed; without system_account jetwal's
//     system account is a "$SYS" no user logs in to, so keeping it where
//     the file asked for none opens nothing). max_subscriptions, max_subs,
//     max_sub_tokens, max_subscription_tokens: resource limits, not access
//     rules; a client may hold more or longer subscriptions than the file
//     says (max_connections, max_pending and max_payload still bound it).
//     mappings, maps: no subject mappings; a message stays on the subject
//     its publish permission was checked against. proxy_protocol: a PROXY
//     header is a protocol error that closes the connection, and nothing
//     in it is trusted. allow_non_tls: with tls jetwal requires TLS of
//     every client, which is stricter. ocsp_cache (serves ocsp_peer),
//     resolver_tls, resolver_preload, resolver_pinned_accounts (serve a
//     resolver), proxies (serves proxy_required): each only serves a
//     setting jetwal refuses, so alone it configures nothing.
//   - jetstream: extension_hint, limits, strict,
//     max_outstanding_catchup, max_buffered_size, max_buffered_msgs,
//     request_queue_limit, info_queue_limit, meta_compact,
//     meta_compact_size, meta_compact_sync, max_concurrent_io: tuning of
//     nats-server's store, placement and API internals; none holds a key
//     or checks a client (the encryption key, prev_key and cipher are
//     read, tpm is refused: encryption.go).
//   - cluster: pool_size, compression, accounts, ping_interval, ping_max,
//     write_deadline, write_timeout, connect_retries, connect_backoff,
//     cluster_advertise, advertise: how many routes, how they are kept
//     alive, retried and advertised; who may connect as a route is
//     authorization and tls, which are implemented or refused.
//   - tls: insecure (it only affects connections a server makes; the
//     client listener makes none); allow_insecure_cipher_suites (jetwal
//     offers only Go's secure suites, which is stricter).
//   - websocket.tls: insecure (the listener makes no connections);
//     allow_insecure_cipher_suites (as above); handshake_first, first,
//     immediate (wss:// always starts with the TLS handshake); timeout
//     (websocket { handshake_timeout } bounds the TLS handshake and the
//     upgrade together).
//   - cluster.tls: insecure (jetwal always verifies the servers its routes
//     connect to, which is stricter); allow_insecure_cipher_suites (as
//     above); handshake_first, first, immediate (routes always start with
//     the TLS handshake).
//
// The websocket block (websocket.go) implements host, port, listen,
// no_tls, tls, compression, same_origin, allowed_origins,
// handshake_timeout, ping_interval, headers, authorization { user,
// password, token, timeout } and no_auth_user; it refuses jwt_cookie,
// user_cookie, pass_cookie, token_cookie and advertise. Without no_tls:
// true it needs a tls block, as in nats-server; without a port it opens
// nothing (a warning). A user's allowed_connection_types is enforced:
// STANDARD is the client port, WEBSOCKET the websocket one.
//
// One more warning exists outside the tables: tls { handshake_first:
// auto } or a fallback delay, where jetwal keeps the handshake first
// without the fallback to plain INFO, which is stricter.
package config
