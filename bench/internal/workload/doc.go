// Package workload holds the client workloads the comparison runs against
// each server through nats.go: JetStream publish (async and sync), pull
// fetch, pull consume, ordered consume, core publish without subscribers,
// core publish with one subscriber, and request/reply.
//
// Every workload takes the same Params (server URL, payload size, message
// count, time cap) and returns a Result with the number of messages that
// completed, their payload bytes and the elapsed time; the sync publish and
// request/reply workloads also return per-operation latency percentiles.
// Workloads stop issuing work when either the count or the time cap is
// reached, so a slow server shortens a run rather than stretching it; the
// result always says how many messages were actually measured.
//
// The read workloads (fetch, consume, ordered) read a stream filled earlier,
// normally by the async publish workload. Each workload opens its own
// connections and closes them before returning. A consumer the server never
// answers for (no consumer API) fails with ErrConsumerAPI, so the suite can
// stop asking that server.
//
// CreateDurables, ConsumerInfo and StreamConsumers serve the
// durable-consumers test: many durable consumers on one stream, idle, then
// restarted.
package workload
