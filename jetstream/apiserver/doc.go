// Package apiserver holds the $JS.API.> request handlers of a JetStream:
// each decodes a request's JSON, calls one operation of Ops and encodes
// the reply or the API error. Ops is the small exported operation set
// that *jetstream.JetStream implements; this package never imports
// jetstream (internal/layering checks it), so the compiler keeps the
// handlers to that set. A clustered JetStream decides inside each
// operation how the cluster serves it; the handlers know nothing of the
// cluster.
//
// Server also holds what every handler shares: the routing table (an
// operation name to its handler and its work queue, Register and Route),
// running a handler (Serve: the API-level refusal, a panic answered with a
// 500), the request helpers (IsEmpty, Decode, StreamArg) and the replies
// (Respond, RespondError, HidePaths: an error reply never shows the store
// directory), sent through Ops.SendReply.
//
// jetstream keeps the $JS.API.> subscription and the work queues, and the
// handlers that are not decode-operation-encode shaped, registered in this
// table through Register: those that stream data (DIRECT.GET's batches,
// STREAM.SNAPSHOT's chunks, STREAM.RESTORE's chunk subscription), the
// operations with a subscription of their own (CONSUMER.MSG.NEXT,
// META.LEADER.STEPDOWN, SERVER.REMOVE) and the ones not moved yet
// (jetstream/doc.go lists them).
//
// # Source files
//
//   - server.go: Server, New and Serve.
//   - table.go: the routing table: Queue, Handler, Register, Route.
//   - request.go: Request and the request helpers.
//   - reply.go: Respond, RespondError and HidePaths.
//   - level.go: refusing requests that need a newer API level.
//   - ops.go: Ops, the operations the handlers call.
//   - stream.go: the INFO and STREAM.* handlers (create, update, info, delete, purge, names, list).
//   - msg.go: the STREAM.MSG.GET and STREAM.MSG.DELETE handlers.
//   - consumer.go: the CONSUMER.* handlers (create, info, delete, names, list, pause, unpin, reset).
//   - doc.go: this overview.
package apiserver
