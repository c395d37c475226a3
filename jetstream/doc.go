// Package jetstream is jetwal's JetStream layer: the operations behind the
// $JS.API.> requests, the publish path that stores captured messages and
// answers with a PubAck, and the stream directory layout on disk.
//
// # Shape
//
// New attaches a JetStream to an in-process server.Server. It loads the
// streams found under Config.StoreDir, subscribes $JS.API.> internally and,
// for every stream, subscribes the stream's subjects. The API handlers that
// decode a request, call one operation and encode the reply live in
// jetstream/apiserver, which routes the requests and calls the exported
// operations of apiserver.Ops (ops_*.go, and the cluster's, snapshot's and
// restore's in their files); DIRECT.GET, whose reply is not JSON, stays
// here (api_direct*.go) and registers in apiserver's table through
// apiserver.Server.Register. Consumers (CONSUMER.* API, acks, pull and push
// delivery) are a separate manager that registers its API handlers beside
// the stream ones and keeps its state next to each stream (consumerCount).
//
// Stream, consumer, the manager and the cluster glue form a real cycle and
// therefore stay in this one package: a stream holds its consumer set, an
// environment value (env.go: the host, the settings, the logger and the
// events, shared with its consumers) and, for what is the cycle proper,
// the manager (the stream table, account limits, the consumer manager, the
// follow-up work queue, the cluster glue); a
// consumer reads its stream's store and drives its retention; the manager
// owns the stream table and the consumer manager; the cluster glue
// (cluster*.go) reaches streams and consumers through the manager and is
// called back by them when a stream or consumer changes. The pieces that
// call none of them back live in packages of their own under internal/:
// internal/archive (the snapshot archive format), internal/cron (cron
// patterns of message schedules), internal/queue (the work queue) and
// internal/dedupe (the Nats-Msg-Id table of the duplicate window);
// validate/ and api/ (leaves: the config rules, the API's JSON types) sit
// beside them.
//
// # Source files
//
// Each file of the package, one line each (a test in internal/lint keeps
// this list complete):
//
//   - jetstream.go: the manager: Config, New, Close, the stream table.
//   - host.go: Host, what JetStream needs of the server.
//   - disabled.go: ServeDisabled, the API of an account without JetStream.
//   - domain.go: the $JS.<domain>.API.> prefix of a JetStream domain.
//   - account_limits.go: account limits (max streams, consumers, storage).
//   - api.go: the $JS.API.> subscription: routing (apiserver) to the worker queues; SendReply.
//   - ops_stream.go: the stream operations of apiserver.Ops (INFO and STREAM.*).
//   - ops_msg.go: the message operations of apiserver.Ops (STREAM.MSG.GET and STREAM.MSG.DELETE).
//   - api_direct.go: DIRECT.GET and the no-responders reply.
//   - api_direct_batch.go: DIRECT.GET's batched and multi_last forms.
//   - api_snapshot.go: SnapshotStream (STREAM.SNAPSHOT's operation), sending the archive in chunks.
//   - api_restore.go: RestoreStream (STREAM.RESTORE's operation), receiving the archive's chunks.
//   - stream.go: one stream; the publish path and its PubAck.
//   - stream_admin.go: creating, loading, updating and deleting streams.
//   - stream_ops.go: a stream's operation set, the only ways its state changes.
//   - stream_read.go: a stream's read side, for the API handlers.
//   - stream_consumers.go: a stream's consumer operations (add, update, delete).
//   - stream_counter.go: message counters (Nats-Incr).
//   - stream_limits.go: a checked config turned into store limits.
//   - stream_markers.go: subject delete markers.
//   - stream_snapshot.go: a stream's capture for STREAM.SNAPSHOT.
//   - stream_source.go: mirrors and sources on this server.
//   - stream_durable_source.go: a mirror or source through a named consumer of its origin (ADR-60).
//   - stream_transform.go: subject_transform (the stored subject) and republish.
//   - snapshot_restore.go: building a stream from an archive (restoreBuilder).
//   - snapshot_advisory.go: the advisories of snapshots and restores.
//   - batch.go: atomic batch publish (Nats-Batch-Id), staging.
//   - batch_commit.go: committing a batch as one store append.
//   - batch_advisory.go: the advisory of an abandoned batch.
//   - fastbatch.go: fast batch publish (allow_batched, reply .$FI): the batch state, flow acks.
//   - fastbatch_publish.go: a fast batch message's checks, gaps, errors and commit.
//   - schedule.go: message schedules, the stream's schedule table.
//   - schedule_parse.go: the schedule headers and patterns (cron: internal/cron).
//   - schedule_publish.go: the publish checks of schedule messages.
//   - schedule_fire.go: firing due schedules.
//   - ttl.go: per-message TTLs, the expiry heap.
//   - ttl_file.go: ttl.dat, the expiry heap across a restart.
//   - deadline.go: the deadline timer of the expiry and schedule timers.
//   - dedupe_file.go: dedupe.dat, the duplicate window across a restart.
//   - sidecar_file.go: the frame shared by dedupe.dat and ttl.dat.
//   - sealed_file.go: the sealed form of meta.inf, dedupe.dat and ttl.dat.
//   - meta.go: meta.inf / meta.sum persistence (the layout is drawn there).
//   - check.go: the read-only checks of this package's files (jetwal verify).
//   - check_store.go: CheckStore, every stream of a store checked by the
//     packages owning its files (jetwal verify prints the report).
//   - storelock.go: the lock file held by the process serving the store.
//   - recovery_log.go: logging what opening a stream's store repaired.
//   - headers.go: the JetStream headers read on publish and written on replies.
//   - queue.go: workQueue, this package's names for internal/queue.
//   - util.go: filter matching and saturating additions.
//   - waits.go: the fixed timeouts of snapshot, restore and batch paths.
//   - advisory.go: stream, consumer and API audit advisories (built only when subscribed).
//   - env.go: env, the host, settings, logger and event publishing that
//     streams and consumers share (JetStream embeds it).
//   - advisory_consumer.go: message advisories (nak, term, max_deliver), ack metric.
//   - stats.go: Stats and MetaStats for /jsz.
//   - details.go: account, stream and consumer details for /jsz.
//   - engine_stats.go: EngineStats, the storage engine's figures for /metrics.
//   - msgtrace_hook.go: TraceStream, message tracing's view of streams.
//   - consumer_manager.go: the consumer manager ($JS.ACK.>, $JS.FC.>, interest).
//   - ops_consumer.go: the consumer operations of apiserver.Ops (CONSUMER.CREATE / INFO / DELETE / NAMES / LIST / PAUSE / UNPIN / RESET).
//   - consumer_api.go: CONSUMER.MSG.NEXT, served on the requester's goroutine.
//   - consumer_pause.go: pause_until: a pause's deadline, setting it.
//   - consumer_replicas.go: a consumer's num_replicas against its stream's.
//   - consumer.go: one consumer, its goroutine and delivery rounds.
//   - consumer_reset.go: a consumer reset, moving a consumer back to its ack floor or to a sequence.
//   - consumer_position.go: where a consumer starts and where a purge moves it.
//   - consumer_pull.go: pull delivery (waiting requests, 408 and 409 replies).
//   - consumer_push.go: push delivery, flow control (and the flow_control ack policy) and heartbeats.
//   - consumer_ratelimit.go: push's rate_limit_bps.
//   - consumer_priority.go: pull's priority groups.
//   - consumer_ack.go: acks, naks, terms and progress.
//   - consumer_maxdeliver.go: messages past max_deliver.
//   - consumer_retention.go: interest and workqueue retention.
//   - cluster_members.go: changing a replicated stream's servers (replicas, RemovePeer).
//   - cluster_convert.go: a stream created with one replica growing to
//     several: made a raft group of one on its server, crash-safely.
//   - cluster_placement.go: picking a stream's servers (placement cluster and tags).
//   - cluster.go: clustered JetStream: the meta group and replicated streams.
//   - cluster_open.go: opening replicas in the background, several at a time.
//   - cluster_assignments.go: the stream assignments, decoded once.
//   - cluster_api.go: the meta leader's side of the stream operations (clusterCreateStream, …), StepDownStream.
//   - cluster_consumer.go: consumer state of replicated streams.
//   - cluster_stepdown.go: meta and consumer leader step-downs (StepDownConsumer).
//   - cluster_stale.go: deleting replica data of streams this server no longer holds.
//   - cluster_server_remove.go: SERVER.REMOVE, a server taken out of the
//     meta group, and SERVER.EVACUATE, a server's replicas moved off it.
//   - cluster_metaop.go: serveMetaOp, how the meta leader answers the
//     system account's operations (step-down, server removal).
//   - cluster_state.go: listings with the states of the servers serving
//     the streams (asked over the cluster).
//   - cluster_limits.go: account limits counted across the cluster.
//   - cluster_direct.go: direct gets of replicated streams, answered by
//     every current replica (a follower through a read-only stream).
//   - cluster_source.go: mirrors and sources whose origin another server
//     serves.
//   - cluster_restore.go: restoring an archive into the cluster.
//   - doc.go: this overview.
//
// # Consumers
//
// Each consumer has one goroutine that does all its deliveries. It sleeps on
// a channel until signalled: by the stream once a new message matching the
// consumer's filter is visible (from the AppendDone path, so no polling), by
// a pull request, by an ack or nak, by the server's interest hook (push
// consumers), or by its single timer, armed for the earliest of: the next
// possible redelivery, a pull request's expiry or heartbeat, a push idle
// heartbeat, the inactive threshold. An idle consumer costs no CPU. A round
// takes the consumer's lock, decides up to 256 deliveries (redeliveries due
// first, then new messages from Delivered.Stream+1 through the store's
// LoadNext with the filter), records them in the state, and publishes them
// after unlocking, routed to the pull request's inbox or the deliver subject
// but presented under the message's own subject (server.PublishAs), with the
// reply $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>.
//
// Delivery and ack state is a consumerstate.State. Durable consumers of file
// streams (durable_name set, not mem_storage) keep it in a
// consumerstate.Consumer under obs/<name>/ (meta.inf holds {"created",
// "config"}; until its state first changes, a consumer is one record of
// obs/catalog.log, which its create reply waits for); the others keep it
// in memory. State changes are flushed by
// consumerstate within the sync interval; a confirmed ack (an ack with a
// reply subject) under sync always is answered only after Consumer.Flush.
// After a crash a consumer resumes from a state at or before the real one,
// so messages may be delivered again but none is skipped.
//
// Redelivery: a pending message is due ack_wait (or its backoff step) after
// its last delivery, at its nak time after a -NAK, and +WPI restarts its
// clock (in memory). A message past max_deliver is set aside as
// nats-server does: never delivered again and not awaiting an ack, but
// still pending in the state (the ack floor stays below it) until an ack
// leaves nothing else pending. A paused consumer (pause_until in its
// config) delivers nothing until the deadline. Pull
// requests that expire are answered 408 Request Timeout (with
// Nats-Pending-Messages/Bytes) 100ms after their expiry, so a client whose
// timeout equals the expiry sees its own timeout first as with nats-server;
// no_wait requests end with 404 No Messages (408 after a partial batch);
// refusals are 409 (MaxRequestBatch, MaxWaiting, MaxBytes, Consumer
// Deleted). max_bytes counts subject, ack reply, headers and payload of
// each message, as nats-server does.
//
// Retention: on a workqueue stream a message is deleted when acked; under
// interest once every other consumer whose filter matches it has acked it
// (is past it). As with nats-server, an interest stream keeps no message
// that no consumer's filter matches when it is stored (it is deleted just
// after its PubAck, from the JetStream work queue, since the store's
// AppendDone callback must not delete), and deleting a consumer removes the
// messages past its ack floor that no remaining consumer needs (all of
// them when it was the last).
//
// Pull requests (CONSUMER.MSG.NEXT) are handled on the requester's
// goroutine, not on an API worker: they only touch memory. Acks find their
// consumer through a one-entry cache (the consumer of the previous ack)
// and parse the ack subject without allocating; an ack wakes the consumer
// only when it frees room under max_ack_pending for a waiting request (or
// is a -NAK / +NXT). A round builds all its ack reply subjects in one
// buffer and makes one string of them.
//
// last_per_subject: the picked sequences (the last message of each
// subject at creation) are kept in the durable consumer's meta.inf, so a
// restart resumes the same positioning.
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
// # Encryption at rest
//
// With Config.Encryption (a key; nats-server's `jetstream { key, cipher,
// prev_key }`) a file stream is created encrypted, and every file in its
// directory is encrypted and authenticated with one data key per stream:
//
//	msgs/key.jwk         the stream's random data key, wrapped by the
//	                     configured key (package crypt's key file)
//	msgs/*.seg, index    records and checkpoint subjects sealed (wal)
//	meta.inf             the config JSON sealed whole (sealed_file.go)
//	meta.sum             the checksum of meta.inf's stored (sealed) bytes
//	dedupe.dat, ttl.dat  the sidecar frame sealed whole (sealed_file.go)
//	obs/                 consumer configs, states, logs and the catalogue
//	                     sealed (consumerstate, Options.Key)
//
// Which key: the store's. The wal store already draws the data key and
// keeps it wrapped in msgs/key.jwk; jetstream seals its own files and the
// consumer state with that same key (wal.Store.DataKey), each file kind
// under associated data of its own, so a stream has one key file, one data
// key, one thing to rewrap when the configured key rotates (the store
// rewraps it at open with prev_key), and a wrong key is one check. A
// second key file of jetstream's own would double that for no gain.
//
// Order of loading: meta.inf holds the store's options, so it is read
// before the store opens. openStream therefore reads msgs/key.jwk first
// (wal.ReadKey, which changes nothing), opens meta.inf with the data key,
// then opens the store with the configured key (which rewraps the key file
// if it opened with prev_key). A new stream's key file is written into its
// hidden directory with meta.inf and synced with it (writeNewMeta), so the
// stream appears with its key, and a restore does the same in its hidden
// directory. Memory streams write nothing; replicated streams pass the key
// to their group's stores (cluster.go).
//
// Whether a stream is encrypted is decided when it is created, from its
// directory afterwards: a key file means every file of it is sealed (a
// plain meta.inf, sidecar or consumer file beside a key file is refused,
// as a sealed one without a key file is). A stream created without a key
// stays plain when a key is configured later (a warning says so; its store
// is then opened without the key, so it never draws one of its own), as
// the wal store does with plain segments (nats-server converts such a
// stream; jetwal does not yet).
//
// A key that does not open a stream's key file (another key, or none
// configured) refuses the stream before anything in its directory is read
// or repaired: the load error (LoadErrors) names the stream and says the
// key does not match, nothing is removed, quarantined or rewritten, and a
// create of the same name is refused; starting with the right key (or it
// as prev_key) brings the stream back whole. A sealed file that does not
// open under the right key is damage: a stream's meta.inf refuses the
// stream (ErrMetaCorrupt, naming the file), a consumer's files refuse the
// consumer (consumerstate.ErrCorrupt, naming file and offset), a sidecar
// is not used and its state is rebuilt from the messages. Nothing that
// does not open is ever served.
//
// What stays clear: file and directory names (the stream's and consumers'
// names, as nats-server's layout has them), the sizes of files and
// records, and in the wal and consumer state the clear fields their
// doc.go files list (sequences, timestamps, lengths, generations). The
// store lock's holder file (the pid) is not a stream's. A snapshot
// (STREAM.SNAPSHOT) leaves the server in the clear, as nats-server's does:
// the archive is the stream's content for the client to keep; restoring
// it on an encrypted server makes an encrypted stream under that server's
// key.
//
// # API requests
//
// API requests are copied and run on worker goroutines, never on the
// publisher's goroutine, because creating or deleting a stream touches the
// disk: one worker for management requests, one for MSG.GET and DIRECT.GET
// so reads are not held up behind a slow create.
//
// jetwal serves $JS.API.> through one subscription, where nats-server
// subscribes some subjects only when they have a responder: DIRECT.GET for
// allow_direct streams, $JS.ACK for consumers that take acks. For those,
// jetwal answers a request with the 503 no-responders status the server
// would send (noResponders), so clients see the same failure.
package jetstream
