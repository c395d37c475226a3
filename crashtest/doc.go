// Package crashtest holds jetwal's process-level crash tests. They build
// the jetwal binary, run `jetwal serve -js` as a child process on a
// temporary store and talk to it with nats.go, so what they check is what a
// client sees across real process deaths:
//
//   - TestKill9: --sync=always, async publishes in flight and a durable
//     pull consumer acking with confirmed acks; SIGKILL at seeded random
//     moments, restart, and every acknowledged message must be there with
//     the same subject, headers and payload, no sequence handed out twice,
//     the consumer's ack floor not below a confirmed ack, no confirmed
//     message redelivered. JETWAL_CRASH_CYCLES sets the cycles (20 in
//     `go test`, 200 in `make crash`), JETWAL_CRASH_SEED replays a run.
//   - TestKill9SyncInterval and TestKill9SyncNever: the same, with the same
//     strict checks, under --sync=200ms and --sync=never: there an
//     acknowledgement means written to the operating system, which a
//     process crash cannot lose (a quarter of the cycles, at least 5).
//   - TestBitRot: a flipped byte in an old sealed segment of a stopped
//     server; the restarted server logs the damaged record with its file
//     and byte offset, serves every other message and answers a get of the
//     damaged sequence with "message not found".
//   - TestDiskFull: a store on a small filesystem (a tmpfs the test mounts
//     when it runs as root, else it is skipped in favour of the in-process
//     ErrorFS test); see diskfull_test.go.
//   - TestClusterRollingRestart: every server of a 3-server cluster (and a
//     5-server one in make cluster-chaos) is put in lame duck mode and
//     started again in turn under publishers and a consumer of an R3
//     stream; nothing acknowledged is lost, no confirmed ack redelivered,
//     every server exits 0, and no publisher goes more than 5 s without
//     an acknowledgement.
//   - TestClusterMembershipUnderLoad: the same checks while an R3 stream on
//     four servers has its leader peer-removed (the stream moves) and its
//     replicas go to 4, 2 and 3 again.
//   - TestClusterConvertKill9: a stream created with one replica grows to
//     three under publishers and a consumer, and its server is killed
//     midway through converting it into a raft group (once the local
//     stream is marked, once the group holds part of the copy); the
//     restarted server finishes: the same checks, every replica holds the
//     same messages, and the local copy is gone.
//   - TestClusterLinearizableKV and TestClusterLinearizableKVMove: a KV
//     workload checked with porcupine through a leader kill, and through a
//     move of the bucket off its leader's server.
package crashtest
