// Package monitor serves nats-server's HTTP monitoring endpoints for a
// jetwal server: /varz, /connz, /routez, /subsz, /accountz, /jsz and
// /healthz, with nats-server's JSON field names so existing dashboards and
// scrapers read them, and /metrics in the Prometheus text format (package
// monitor/metrics, the storage engine's figures included).
//
// It reports only what jetwal knows. Fields nats-server fills from
// subsystems jetwal does not have (gateways, leaf nodes, MQTT,
// account imports, exports and JWTs, sublist match statistics) are left
// out rather than reported as zeros.
//
// The monitor reads snapshots through the small Source, JetStream and
// AccountSource interfaces (implemented by *server.Server,
// *jetstream.JetStream and, for the accounts, by cmd/jetwal); it never
// touches their internals.
package monitor
