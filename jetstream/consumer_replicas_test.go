package jetstream

import (
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestCheckConsumerReplicas: nats-server's rules for a consumer's
// num_replicas against its stream's.
func TestCheckConsumerReplicas(t *testing.T) {
	for _, c := range []struct {
		cons, stream int
		ret          api.RetentionPolicy
		want         api.ErrCode
	}{
		{0, 3, api.LimitsRetention, 0},
		{1, 3, api.LimitsRetention, 0},
		{3, 3, api.LimitsRetention, 0},
		{5, 3, api.LimitsRetention, api.ErrConsumerReplicasExceedsStream},
		{2, 0, api.LimitsRetention, api.ErrConsumerReplicasExceedsStream},
		{1, 0, api.LimitsRetention, 0},
		{-1, 3, api.LimitsRetention, api.ErrReplicasNegative},
		{1, 3, api.WorkQueueRetention, api.ErrConsumerReplicasMatchStream},
		{1, 3, api.InterestRetention, api.ErrConsumerReplicasMatchStream},
		{3, 3, api.InterestRetention, 0},
		{0, 3, api.WorkQueueRetention, 0},
	} {
		aerr := checkConsumerReplicas(&api.ConsumerConfig{Replicas: c.cons}, &api.StreamConfig{Replicas: c.stream, Retention: c.ret})
		var got api.ErrCode
		if aerr != nil {
			got = aerr.ErrCode
		}
		if got != c.want {
			t.Errorf("consumer R%d of stream R%d %v: %v, want %d", c.cons, c.stream, c.ret, aerr, c.want)
		}
	}
}
