// Package cluster is clustered JetStream's consensus layer: hashicorp/raft
// groups on jetwal's raft log store (raftstore), carried over the route
// port (raftstore/mux), between the servers of one cluster.
//
//   - The meta group has every server as a member. Its state is a small
//     replicated map (key → bytes) that the JetStream layer fills with
//     stream and consumer assignments and reads back through the callbacks
//     it gives Start; the map's encoding of values is JetStream's. The
//     keys this package writes there are a replicated stream's fence,
//     "_fence/<stream>": a token each new stream leader commits before it
//     serves (with the wait for it, a read barrier), which the old
//     leader's Replica.Checkpoint puts must match to apply; and its
//     serving mark, "_serving/<stream>": the same token, committed once
//     the leader serves (Replica.Serving). Each server also announces
//     itself there, "_node/<raft id>" (its name and server tags,
//     nodeinfo.go), for stream placement.
//   - A replicated stream has a group of its own (its peers are named in
//     its assignment). Its leader orders appends through raft; every
//     member applies them to its own wal store (raftstore/stream). A
//     Replica is that member, and its Store method gives the JetStream
//     layer a store.StreamStore whose writes go through raft.
//   - A stream group's members change when its assignment names other
//     servers (membership.go): a new member joins without bootstrapping,
//     as a non-voter, and votes once it has caught up; a removed one
//     leaves, then deletes its replica. Node.RemoveServer takes a server
//     out of the meta group (remove.go).
//   - A replica's writes go through one ordered queue (batcher.go): the
//     appends queued while earlier proposals commit are proposed together
//     as one OpAppendBatch entry (at most 512 messages or 1 MiB, at most 3
//     proposals in flight, so a lone publisher's message goes at once),
//     deletes and purges as entries of their own in their place; each
//     message's callback gets its own result, in log order, and closing
//     the replica fails what was never proposed with store.ErrClosed.
//   - A replica is Current (followerreads.go) while it leads, or follows
//     a leader it hears from, with no snapshot or catch-up under way, has
//     received what the leader last reported applying (progress.go) and
//     has applied what it knows committed: it may then answer reads
//     (direct gets) itself. With follower reads on, the leader sends the
//     followers its commit index (an append without entries) as soon as
//     its write queue drains (drain.go), and a follower's read waits
//     until it has applied what its transport has received
//     (AwaitApplied), so that a read sent right after a write was
//     acknowledged nearly always sees it.
//   - Every meta entry is acted on by every server, so the meta leader
//     sends the same commit notice after each of its writes and when a
//     follower answers its heartbeats again (commitnotice.go), each
//     follower's on a goroutine of its own, and the meta group's raft
//     CommitTimeout is 50 ms rather than the 5 ms that once carried its
//     commits (most of a quiet server's CPU).
//   - Stream groups share their heartbeats (mux.Transport.ShareHeartbeats):
//     one round per pair of servers every HeartbeatTimeout/10 carries the
//     heartbeat of every group one leads and the other follows, on a
//     raft connection of its own ("$beats"), authenticated on the route
//     port like every raft connection.
//   - A stream group's raft snapshots are the stream's state, not its
//     messages (raftstore/stream, version 2): a follower that fell behind
//     the leader's compacted log installs one, keeps its own messages and
//     fetches only the range it lacks from the group's leader
//     (catchup.go), on "$JWAL.CLUSTER.CATCHUP.<hex of the stream name>"
//     in the server-internal account. Every member listens there; the
//     leader is asked first, any member (with what it holds) when no
//     leader answers; a member catching up itself never answers.
//     That account has no client connection and no import or export:
//     only the servers themselves publish and subscribe in it, and its
//     messages cross between servers only on routes, which authenticate
//     (route credentials, TLS) before they carry anything. No client of
//     any account can ask, answer or listen (TestCatchupOnlyMissingRange
//     checks that ">" subscribers hear none of it). The answers carry the
//     messages in the clear on the route, as raft's appends do.
//     Options.StreamSnapshotThreshold and StreamTrailingLogs set how
//     often a stream group snapshots and how much log it keeps.
//   - Servers ask each other what only one of them knows (gather.go:
//     Answer, Gather): the JetStream layer names the subjects, and the
//     requests and answers live in the internal account, like the meta
//     proposals and progress reports, out of every client's reach.
//
// Raft server ids and addresses are the servers' route listen addresses
// (host:port), which every server knows from its --routes before any
// route is up, so all servers bootstrap the same configuration. Server
// names, for display, come from the routes' INFO.
//
// On disk, under the directory given to New:
//
//	meta/raft/         the meta group's log and stable store (raftlog)
//	meta/snapshots/    its snapshots (the map, JSON)
//	streams/<name>/    one replicated stream:
//	    raft/          its log and stable store
//	    snapshots/     raft snapshots of the stream (raftstore/stream: its state)
//	    fsm/           the replica's wal store, its applied marks, and a
//	                   restore under way (raftstore/stream doc.go)
//
// With Options.Encryption set, every group's raft log (raftlog: each
// entry sealed, a key file per log) and snapshots (raftstore.WrapSnapshots:
// the state stream sealed in chunks, a key file per snapshot directory) are
// encrypted. What stays clear: each log's stable file (term and vote), meta
// file (first index) and offset index files, each record's index, length
// and append time; each snapshot's meta.json (index, term, sizes, CRC and
// the group's membership: route addresses); the key files (data keys,
// wrapped); and the group directory names (a stream's name, hex-encoded).
// A replica's fsm/ wal store is encrypted by the wal.Options OpenStream is
// given, not by this option.
//
// This package does not import jetstream; jetstream does not import it.
// Package serve wires them together.
package cluster
