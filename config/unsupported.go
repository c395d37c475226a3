package config

import "strings"

// Settings of nats-server that jetwal does not implement. Each one is in
// exactly one of two tables:
//
//   - refusedFields: ignoring it would weaken security (authentication,
//     authorization, TLS, encryption, accounts, rate limits), so Load fails
//     with the field's position and a sentence saying what jetwal does not
//     do;
//   - ignoredFields: ignoring it is safe (a listener jetwal does not open,
//     a log format, a tuning knob, ...), so Load records a Warning giving
//     the reason.
//
// Both are keyed by section (the block the field is in, "" for the top
// level) and then by the field's lower-case name. Fields a section
// implements are handled by its parser and are in neither table.
// TestEveryUnsupportedFieldIsClassified walks both tables.

// Sections of the tables.
const (
	secTop          = ""                      // the top level of the file
	secJetStream    = "jetstream"             // jetstream { }
	secCluster      = "cluster"               // cluster { }
	secClusterAuth  = "cluster.authorization" // cluster { authorization { } }
	secTLS          = "tls"                   // the client listener's tls { }
	secClusterTLS   = "cluster.tls"           // cluster { tls { } }
	secAuth         = "authorization"         // authorization { }
	secUser         = "users"                 // an entry of authorization { users } or accounts { X { users } }
	secWebsocket    = "websocket"             // websocket { }
	secWSTLS        = "websocket.tls"         // websocket { tls { } }
	operatorRefusal = "operator and account JWTs are not built into jetwal; refusing to start without the authentication they configure"
)

// refusal is why a field is refused. harmless, when set, reports a value
// that turns the feature off (proxy_required: false), which is accepted.
type refusal struct {
	why      string
	harmless func(v value) bool
}

// refusedFields: section -> field -> refusal.
var refusedFields = func() map[string]map[string]refusal {
	r := func(why string, names ...string) map[string]refusal {
		m := make(map[string]refusal, len(names))
		for _, n := range names {
			m[n] = refusal{why: why}
		}
		return m
	}
	merge := func(ms ...map[string]refusal) map[string]refusal {
		out := make(map[string]refusal)
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	tlsCommon := merge(
		r("checking peer certificates against the known URLs is not built into jetwal; refusing to start rather than accept any certificate the CA signed",
			"verify_cert_and_check_known_urls"),
		r("choosing TLS cipher suites is not built into jetwal; refusing to start rather than offer suites this file leaves out",
			"cipher_suites"),
		r("choosing TLS curves is not built into jetwal; refusing to start rather than offer curves this file leaves out",
			"curve_preferences"),
		r("the TLS connection rate limit is not built into jetwal; refusing to start without it", "connection_rate_limit"),
		r("certificate pinning is not built into jetwal; refusing to start rather than accept any certificate the CA signed",
			"pinned_certs"),
		r("jetwal does not read the operating system's certificate store; give cert_file, key_file and ca_file instead",
			"cert_store", "cert_match_by", "cert_match", "ca_certs_match", "cert_match_skip_invalid"),
		r("OCSP checks of peer certificates are not built into jetwal; refusing to start rather than accept revoked certificates",
			"ocsp_peer"),
		r("several certificates chosen by SNI are not supported by jetwal; give one cert_file and key_file",
			"certs", "certificates"),
	)
	routePerms := "route permissions (which subjects are imported from and exported to other servers) are not built into jetwal; refusing to start rather than exchange every subject"
	proxyRequired := refusal{
		why:      "connecting only through a trusted proxy is not built into jetwal; refusing to start rather than let this user connect directly",
		harmless: isFalse,
	}
	m := map[string]map[string]refusal{
		secTop: merge(
			r(operatorRefusal, "operator", "operators", "roots", "root", "root_operators", "root_operator",
				"trusted", "trusted_keys", "resolver", "account_resolver", "accounts_resolver", "default_sentinel"),
			map[string]refusal{"ocsp": {
				why:      "OCSP stapling and the revocation check of the server's own certificate are not built into jetwal; refusing to start without them (ocsp: false is accepted)",
				harmless: ocspOff,
			}},
		),
		secJetStream: encryptionRefusals(),
		secCluster:   r(routePerms, "permissions"),
		secClusterAuth: merge(
			r("Cluster authorization does not support tokens", "token"),
			r("Cluster authorization does not allow multiple users", "users"),
			r("Cluster authorization does not support callouts", "auth_callout", "auth_hook"),
			r(routePerms, "permissions", "default_permission", "default_permissions"),
			map[string]refusal{"proxy_required": proxyRequired},
		),
		secTLS: tlsCommon,
		secClusterTLS: merge(tlsCommon,
			r("mapping a route's certificate to the cluster user is not built into jetwal; refusing to start rather than accept any route certificate the CA signed",
				"verify_and_map")),
		secAuth: merge(
			r("not supported by jetwal; refusing to start without the authentication it configures",
				"auth_callout", "auth_hook"),
			map[string]refusal{"proxy_required": proxyRequired},
		),
		secUser: merge(
			r("a user's account is given by declaring the user in accounts { NAME { users } }; refusing to start rather than put this user in another account",
				"account"),
			map[string]refusal{"proxy_required": proxyRequired},
		),
	}
	m[secWebsocket] = merge(
		r("JWT authentication is not built into jetwal; refusing to start without the authentication it configures", "jwt_cookie"),
		r("logging in with cookies is not built into jetwal; refusing to start rather than ignore how WebSocket clients authenticate",
			"user_cookie", "pass_cookie", "token_cookie"),
		r("advertised WebSocket URLs (gossiped to the WebSocket clients of a cluster) are not built into jetwal; refusing to start rather than ignore the address this file gives",
			"advertise"),
	)
	m[secWSTLS] = merge(tlsCommon)
	return m
}()

// ignoredFields: section -> field -> why ignoring it is safe.
var ignoredFields = map[string]map[string]string{
	secTop: {
		"client_advertise":         "no cluster discovery for clients; they keep the URLs they were given",
		"trace_verbose":            "traces have one level",
		"trace_headers":            "traces have one level",
		"logtime":                  "log format is fixed",
		"logtime_utc":              "log format is fixed",
		"mappings":                 "no subject mappings; messages stay on the subject permissions were checked against",
		"maps":                     "no subject mappings; messages stay on the subject permissions were checked against",
		"disable_sublist_cache":    "the cache is always on",
		"no_sublist_cache":         "the cache is always on",
		"https":                    "no HTTPS monitoring listener is opened",
		"https_port":               "no HTTPS monitoring listener is opened",
		"http_base_path":           "monitoring is served at /",
		"gateway":                  "no gateways",
		"leaf":                     "no leaf nodes",
		"leafnodes":                "no leaf nodes",
		"logfile_size_limit":       "no log rotation",
		"log_size_limit":           "no log rotation",
		"logfile_max_num":          "no log rotation",
		"log_max_num":              "no log rotation",
		"syslog":                   "no syslog; logs go to stderr or logfile",
		"remote_syslog":            "no syslog; logs go to stderr or logfile",
		"pidfile":                  "no pid file",
		"pid_file":                 "no pid file",
		"prof_port":                "no profiling listener is opened",
		"prof_block_rate":          "no profiling listener is opened",
		"proxy_protocol":           "no PROXY protocol; a PROXY header is a protocol error that closes the connection",
		"max_traced_msg_len":       "traces show up to 256 payload bytes",
		"max_subscriptions":        "no per-connection subscription limit (a resource limit, not access control)",
		"max_subs":                 "no per-connection subscription limit (a resource limit, not access control)",
		"max_sub_tokens":           "no subscription token limit (a resource limit, not access control)",
		"max_subscription_tokens":  "no subscription token limit (a resource limit, not access control)",
		"ocsp_cache":               "it only serves ocsp_peer, which jetwal refuses",
		"allow_non_tls":            "TLS, when configured, is required of every client, which is stricter",
		"write_timeout":            "a client past write_deadline is always closed",
		"resolver_tls":             "it only serves a resolver, which jetwal refuses",
		"resolver_preload":         "it only serves a resolver, which jetwal refuses",
		"resolver_pinned_accounts": "it only serves a resolver, which jetwal refuses",
		"no_system_account":        "jetwal has a system account only when system_account names one",
		"no_system":                "jetwal has a system account only when system_account names one",
		"no_sys_acc":               "jetwal has a system account only when system_account names one",
		"no_header_support":        "headers are always on",
		"connect_error_reports":    "route connect errors are reported jetwal's way",
		"reconnect_error_reports":  "route connect errors are reported jetwal's way",
		"mqtt":                     "no MQTT listener is opened",
		"server_metadata":          "no server metadata",
		"feature_flags":            "no feature flags",
		"default_js_domain":        "no JetStream domains for leaf node accounts",
		"no_fast_producer_stall":   "publishers always pause briefly for slow receivers",
		"max_closed_clients":       "no closed connection history",
		"proxies":                  "trusted proxies only serve proxy_required, which jetwal refuses",
	},
	secJetStream: {
		"extension_hint":          "a hint for nats-server's own store",
		"limits":                  "JetStream API limits are jetwal's own",
		"max_outstanding_catchup": "a tuning of nats-server's internals",
		"max_buffered_size":       "a tuning of nats-server's internals",
		"max_buffered_msgs":       "a tuning of nats-server's internals",
		"request_queue_limit":     "a tuning of nats-server's internals",
		"info_queue_limit":        "a tuning of nats-server's internals",
		"meta_compact":            "a tuning of nats-server's internals",
		"meta_compact_size":       "a tuning of nats-server's internals",
		"meta_compact_sync":       "a tuning of nats-server's internals",
		"max_concurrent_io":       "a tuning of nats-server's internals",
		"strict":                  "JetStream API requests are checked jetwal's way",
	},
	secCluster: {
		"pool_size":         "one route per pair of servers",
		"compression":       "routes are not compressed",
		"accounts":          "no routes pinned to accounts; every account shares the route",
		"ping_interval":     "routes keep jetwal's own ping timing",
		"ping_max":          "routes keep jetwal's own ping timing",
		"write_deadline":    "routes keep jetwal's own write deadline",
		"write_timeout":     "routes keep jetwal's own write deadline",
		"connect_retries":   "routes keep jetwal's own retry policy",
		"connect_backoff":   "reconnecting routes always back off",
		"cluster_advertise": "no advertised route address; other servers use the address they connected to",
		"advertise":         "no advertised route address; other servers use the address they connected to",
	},
	secTLS: {
		"insecure":                     "it only affects connections a server makes, and the client listener makes none",
		"allow_insecure_cipher_suites": "jetwal offers only Go's secure cipher suites, which is stricter",
	},
	secWSTLS: {
		"insecure":                     "it only affects connections a server makes, and the websocket listener makes none",
		"allow_insecure_cipher_suites": "jetwal offers only Go's secure cipher suites, which is stricter",
		"handshake_first":              "a wss:// connection always starts with the TLS handshake",
		"first":                        "a wss:// connection always starts with the TLS handshake",
		"immediate":                    "a wss:// connection always starts with the TLS handshake",
		"timeout":                      "websocket { handshake_timeout } bounds the TLS handshake and the upgrade together",
	},
	secClusterTLS: {
		"insecure":                     "jetwal always verifies the servers its routes connect to, which is stricter",
		"allow_insecure_cipher_suites": "jetwal offers only Go's secure cipher suites, which is stricter",
		"handshake_first":              "routes always start with the TLS handshake",
		"first":                        "routes always start with the TLS handshake",
		"immediate":                    "routes always start with the TLS handshake",
	},
}

// unsupported handles field k (n is its full name, e.g.
// "cluster.tls.pinned_certs") of section when the section's parser does
// not implement it: a refused field is an error, an ignored one a
// Warning. known is false when neither table lists it.
func (c *Config) unsupported(section, k, n string, v value) (known bool, err error) {
	k = lower(k)
	if r, ok := refusedFields[section][k]; ok {
		if r.harmless != nil && r.harmless(v) {
			return true, nil
		}
		return true, v.errorf("%s: %s", n, r.why)
	}
	if why, ok := ignoredFields[section][k]; ok {
		c.warn(v, "field %q is not supported by jetwal (%s); ignored", n, why)
		return true, nil
	}
	return false, nil
}

// isFalse reports a boolean false (proxy_required: false asks for nothing).
func isFalse(v value) bool {
	b, err := v.boolean("")
	return err == nil && !b
}

// ocspOff reports ocsp: false or ocsp { mode: never }.
func ocspOff(v value) bool {
	if isFalse(v) {
		return true
	}
	m, ok := v.v.(map[string]any)
	if !ok {
		return false
	}
	for k, x := range m {
		if lower(k) == "mode" {
			s, ok := unwrap(x, v.pos).v.(string)
			return ok && strings.EqualFold(s, "never")
		}
	}
	return false // the default mode staples and checks
}
