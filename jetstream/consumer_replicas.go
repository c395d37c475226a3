package jetstream

import "github.com/jetwal/jetwal/jetstream/api"

// A consumer's num_replicas and mem_storage, checked as nats-server checks
// them: at most its stream's replicas, and, on an interest or work queue
// stream, the stream's own (0 = the stream's). What jetwal does with them:
// nothing of their own. A consumer of a replicated stream runs on the
// stream's leader and its state is checkpointed into the meta group
// (cluster_consumer.go), so it survives a failover whatever num_replicas
// says (an R1 consumer of an R3 stream is as durable as an R3 one), and
// mem_storage is kept in its config without changing where its state is
// kept. A consumer of a stream without a cluster (R1) takes num_replicas
// 0 or 1.

// checkConsumerReplicas refuses a consumer's replica count its stream
// cannot have.
func checkConsumerReplicas(cfg *api.ConsumerConfig, stream *api.StreamConfig) *api.ApiError {
	sr := max(stream.Replicas, 1)
	if cfg.Replicas > sr {
		return api.NewError(api.ErrConsumerReplicasExceedsStream)
	}
	if cfg.Replicas < 0 {
		return api.NewError(api.ErrReplicasNegative)
	}
	if stream.Retention != api.LimitsRetention && cfg.Replicas != 0 && cfg.Replicas != sr {
		return api.NewError(api.ErrConsumerReplicasMatchStream)
	}
	return nil
}
