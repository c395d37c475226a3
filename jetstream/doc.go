// Package jetstream is jetwal's JetStream layer: the $JS.API.> request
// handlers for streams, the publish path that stores captured messages and
// answers with a PubAck, and the stream directory layout on disk.
//
// # Shape
//
// New attaches a JetStream to an in-process server.Server. It loads the
// streams found under Config.StoreDir, subscribes $JS.API.> internally and,
// for every stream, subscribes the stream's subjects. The pieces:
//
//   - jetstream.go: the manager (Config, New, Close, the stream table).
//   - stream.go: one stream; the publish path and its PubAck.
//   - stream_admin.go: creating, loading, updating and deleting streams.
//   - api.go: request dispatch; api_stream.go and api_msg.go the handlers.
//   - meta.go: meta.inf / meta.sum persistence (the layout is drawn there).
//   - config.go: stream config defaults and checks.
//   - dedupe.go, headers.go, queue.go: helpers.
//
// Consumers (CONSUMER.* API, acks, pull and push delivery) are a separate
// manager that registers its API handlers beside the stream ones through
// registerAPI and keeps its state next to each stream (consumerCount).
//
// # Publish path
//
// A message arriving on a stream subject is handled on the publisher's
// goroutine: the Nats-Expected-* and Nats-Msg-Id headers are checked, the
// message is handed to the store's AppendAsync, and the handler returns. The
// PubAck ({"stream":…,"seq":…}) is published from the store's AppendDone
// callback, that is only once the message is durable under the sync policy;
// a message that cannot be stored is answered with an error PubAck. Core
// subscribers of the subject receive the message independently.
//
// Duplicate detection keeps every Nats-Msg-Id seen within the stream's
// duplicate window. A duplicate of a message that is already durable is
// answered at once with "duplicate": true; a duplicate of one still in
// flight is answered when the original's append completes. After a restart
// the table is rebuilt by scanning the messages inside the window.
//
// # API requests
//
// API requests are copied and run on worker goroutines, never on the
// publisher's goroutine, because creating or deleting a stream touches the
// disk: one worker for management requests, one for MSG.GET and DIRECT.GET
// so reads are not held up behind a slow create.
package jetstream
