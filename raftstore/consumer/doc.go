// Package consumer replicates a JetStream consumer's delivery and ack state
// (consumerstate.State) with hashicorp/raft, beside package stream: FSM is
// the raft.FSM each replica of a consumer runs. The consumer's leader
// proposes every change (a delivery, an ack, a nak, a term, an ack-all, a
// reset); raft commits it on a quorum before the leader acts on it (a
// confirmed ack is answered only once committed), so the ack floor and the
// pending set survive the loss of the leader.
//
// The state lives in memory: the raft log and raft's snapshots (the state
// in consumerstate's codec) are its durable record, and a restarted replica
// rebuilds it by restoring its latest snapshot and replaying the log after
// it, as raft does by default. Entries (little endian):
//
//	1 deliver     | sseq u64 | dcount u64 | ts i64
//	2 deliver, no ack policy | sseq u64
//	3 ack         | sseq u64
//	4 ack all     | sseq u64
//	5 nak         | sseq u64 | at i64
//	6 term        | sseq u64
//	7 reset       | start u64
package consumer
