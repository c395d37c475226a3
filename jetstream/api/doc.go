// Package api holds the JSON shapes of the JetStream API that jetwal serves on
// $JS.API.> and the PubAck it sends for stored messages.
//
// The field names, their order and their omitempty rules follow what
// nats-server v2.15 puts on the wire, because the nats CLI and nats.go decode
// these documents and some tools compare them field by field. Every response
// carries a "type" of the form io.nats.jetstream.api.v1.<kind>; errors use the
// same document with an "error" object holding an HTTP-like code, the
// nats-server error number (err_code) and a description. The numbers are
// nats-server's; the descriptions are jetwal's own.
//
// Durations are integers in nanoseconds and times are RFC 3339 strings in UTC
// with trailing zeros of the fraction trimmed (Go's time.Time JSON form), as
// nats-server writes them. Callers must store times in UTC.
//
// The package only describes data: it has no I/O and no dependencies besides
// the standard library.
package api
