package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jetwal/jetwal/wal"
)

// The metrics, by name. Server figures are those of /varz, JetStream's
// those of /jsz; the storage engine's (jetwal_wal_*, jetwal_stream_*,
// jetwal_consumer_*) exist only here.

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	dConnections      = desc("jetwal_server_connections", "Client connections open.")
	dConnectionsTotal = desc("jetwal_server_connections_total", "Client connections accepted since start.")
	dInMsgs           = desc("jetwal_server_in_msgs_total", "Messages published by clients.")
	dInBytes          = desc("jetwal_server_in_bytes_total", "Bytes (headers and payload) published by clients.")
	dOutMsgs          = desc("jetwal_server_out_msgs_total", "Messages delivered to clients.")
	dOutBytes         = desc("jetwal_server_out_bytes_total", "Bytes (headers and payload) delivered to clients.")
	dSubscriptions    = desc("jetwal_server_subscriptions", "Subscriptions, of clients and internal.")
	dSlowConsumers    = desc("jetwal_server_slow_consumers_total", "Clients cut off as slow consumers.")
	dStartTime        = desc("jetwal_server_start_time_seconds", "When the server started, in seconds since the Unix epoch.")

	dStreams      = desc("jetwal_jetstream_streams", "Streams.")
	dConsumers    = desc("jetwal_jetstream_consumers", "Consumers of all streams.")
	dMessages     = desc("jetwal_jetstream_messages", "Messages held by all streams.")
	dBytes        = desc("jetwal_jetstream_bytes", "Bytes held by all streams.")
	dStorageBytes = desc("jetwal_jetstream_storage_bytes", "Bytes held by the streams of one storage type.", "storage")
	dAPIRequests  = desc("jetwal_jetstream_api_requests_total", "JetStream API requests answered.")
	dAPIErrors    = desc("jetwal_jetstream_api_errors_total", "JetStream API requests answered with an error.")
	dLoadErrors   = desc("jetwal_jetstream_load_errors", "Streams and consumers that failed to load at start.")

	dAppendedMsgs  = desc("jetwal_wal_appended_msgs_total", "Messages appended to file streams.")
	dAppendedBytes = desc("jetwal_wal_appended_bytes_total", "Stored size (subject, headers, payload) of the messages appended to file streams.")
	dFsyncs        = desc("jetwal_wal_fsyncs_total", "Fsyncs of segment files and checkpoints.")
	dCheckpoints   = desc("jetwal_wal_checkpoints_total", "Index checkpoints written.")
	dFsyncSeconds  = desc("jetwal_wal_fsync_duration_seconds", "Time each fsync of a segment file or checkpoint took.")
	dMsgsPerFsync  = desc("jetwal_wal_msgs_per_fsync", "Messages made durable by one fsync of the active segment (group commit, sync interval).")

	dStreamLastSeq   = desc("jetwal_stream_last_seq", "Last sequence stored in the stream.", "stream", "storage")
	dSegments        = desc("jetwal_stream_segments", "Segment files of a file stream.", "stream")
	dSegmentBytes    = desc("jetwal_stream_segment_bytes", "Bytes written to a file stream's segment files.", "stream")
	dMappedBytes     = desc("jetwal_stream_mapped_bytes", "Bytes of a file stream's segment files mapped into memory.", "stream")
	dCheckpointAge   = desc("jetwal_stream_checkpoint_age_seconds", "Time since the stream's index checkpoint was written (or the stream opened).", "stream")
	dRecoverySeconds = desc("jetwal_stream_recovery_seconds", "Time the stream's store took to recover when it opened.", "stream")
	dCorruptRecords  = desc("jetwal_stream_corrupt_records_total", "Damaged records found in the stream's segments since it opened (recovery, reads, verification).", "stream")

	dAckFloorLag = desc("jetwal_consumer_ack_floor_lag", "Messages between the consumer's ack floor and the stream's last sequence.", "stream", "consumer")
	dAckPending  = desc("jetwal_consumer_ack_pending", "Messages delivered to the consumer and awaiting an ack.", "stream", "consumer")
)

var allDescs = []*prometheus.Desc{
	dConnections, dConnectionsTotal, dInMsgs, dInBytes, dOutMsgs, dOutBytes, dSubscriptions, dSlowConsumers, dStartTime,
	dStreams, dConsumers, dMessages, dBytes, dStorageBytes, dAPIRequests, dAPIErrors, dLoadErrors,
	dAppendedMsgs, dAppendedBytes, dFsyncs, dCheckpoints, dFsyncSeconds, dMsgsPerFsync,
	dStreamLastSeq, dSegments, dSegmentBytes, dMappedBytes, dCheckpointAge, dRecoverySeconds, dCorruptRecords,
	dAckFloorLag, dAckPending,
}

// emitter sends metrics, turning a construction error (a bug: wrong label
// count) into an invalid metric that the registry reports, never a panic.
type emitter struct{ ch chan<- prometheus.Metric }

func (e *emitter) send(m prometheus.Metric, err error, d *prometheus.Desc) {
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	e.ch <- m
}

func (e *emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...)
	e.send(m, err, d)
}

func (e *emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, prometheus.CounterValue, v, labels...)
	e.send(m, err, d)
}

// histogram sends a histogram of count observations summing to sum, with
// the engine's cumulative buckets.
func (e *emitter) histogram(d *prometheus.Desc, count uint64, sum float64, buckets []wal.Bucket) {
	bs := make(map[float64]uint64, len(buckets))
	for _, b := range buckets {
		bs[b.UpperBound] = b.Count
	}
	m, err := prometheus.NewConstHistogram(d, count, sum, bs)
	e.send(m, err, d)
}
