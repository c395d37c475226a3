// Package monitor serves nats-server's HTTP monitoring endpoints for a
// jetwal server: /varz, /connz, /subsz, /jsz and /healthz, with
// nats-server's JSON field names so existing dashboards and scrapers read
// them, and /metrics in the Prometheus text format (package
// monitor/metrics, the storage engine's figures included).
//
// It reports only what jetwal knows. Fields nats-server fills from
// subsystems jetwal does not have (cluster, gateway, leaf nodes, MQTT,
// websocket, accounts, sublist match statistics, CPU) are left out rather
// than reported as zeros.
//
// The monitor reads snapshots through the small Source and JetStream
// interfaces (implemented by *server.Server and *jetstream.JetStream); it
// never touches their internals.
package monitor
