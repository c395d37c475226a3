// Package apiserver holds the $JS.API.> request handlers of a JetStream:
// each decodes a request's JSON, calls one operation of Ops and encodes
// the reply or the API error. Ops is the small exported operation set
// that *jetstream.JetStream implements; this package never imports
// jetstream (internal/layering checks it), so the compiler keeps the
// handlers to that set. A clustered JetStream decides inside each
// operation how the cluster serves it; the handlers know nothing of the
// cluster (Config.Clustered only adds the operations a cluster alone has,
// ClusterOps).
//
// Server also holds what every handler shares: the routing table (an
// operation name to its handler and its work queue, Register and Route),
// running a handler (Serve: the API-level refusal, a panic answered with a
// 500), the request helpers (IsEmpty, Decode, StreamArg) and the replies
// (Respond, RespondError, HidePaths: an error reply never shows the store
// directory), sent through Ops.SendReply.
//
// jetstream keeps the $JS.API.> subscription and the work queues (its
// handleAPI routes each request through Route and runs Serve on the
// queue the operation names), and registers in this table what is not
// decode-operation-encode shaped: DIRECT.GET, whose reply is the stored
// message itself, a status or a batch of messages, and which a clustered
// stream's leader also serves from subscriptions of its own; and, as
// known operations left alone, CONSUMER.MSG.NEXT (served on the
// requester's goroutine). STREAM.SNAPSHOT and STREAM.RESTORE stream data
// after their reply: their operations return, beside what the reply
// carries, a start function the handler calls once the reply is out.
//
// # Source files
//
//   - server.go: Server, Config, New and Serve.
//   - table.go: the routing table: Queue, Handler, Register, Route.
//   - request.go: Request and the request helpers.
//   - reply.go: Respond, RespondError and HidePaths.
//   - level.go: refusing requests that need a newer API level.
//   - ops.go: Ops, the operations the handlers call.
//   - stream.go: the INFO and STREAM.* handlers (create, update, info, delete, purge, names, list).
//   - msg.go: the STREAM.MSG.GET and STREAM.MSG.DELETE handlers.
//   - consumer.go: the CONSUMER.* handlers (create, info, delete, names, list, pause, unpin, reset).
//   - cluster.go: the operations only a cluster has (step-downs,
//     STREAM.PEER.REMOVE and .EVACUATE; CONSUMER.PEER.REMOVE and
//     .EVACUATE, refused), DecodeStepDown.
//   - snapshot.go: the STREAM.SNAPSHOT and STREAM.RESTORE handlers.
//   - doc.go: this overview.
package apiserver
