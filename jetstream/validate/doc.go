// Package validate holds the config rules of JetStream streams and
// consumers as nats-server v2.15 applies them: the defaults it fills in,
// the limits it enforces, what pedantic mode refuses, and which updates it
// allows. Every check answers with nats-server's API error (code and
// description).
//
// It is a leaf: it depends only on jetstream/api and subject, so its rules
// can be read, tested and fuzzed without a server or a store. The
// jetstream package calls it before it changes anything.
//
// # Source files
//
//   - stream.go: Stream (normalize a create request), StreamUpdate, Replicas, metadata, SameStream.
//   - consumer.go: ConsumerDefaults, Consumer, ConsumerUpdate, filters, the stream's consumer_limits.
//   - pedantic.go: PedanticStream and PedanticConsumer.
//   - markers.go: subject delete markers, atomic batches.
//   - sources.go: mirrors and sources.
//   - transforms.go: subject_transform and republish.
//   - priority.go: priority groups.
//   - sampling.go: sample_freq.
//   - level.go: the API level a consumer config needs.
//   - schedules.go: allow_msg_schedules.
//   - persist.go: persist_mode async.
//   - doc.go: this overview.
package validate
