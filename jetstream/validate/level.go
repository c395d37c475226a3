package validate

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// SetConsumerRequiredLevel records the API level a consumer config needs,
// as nats-server computes it: 4 for the flow control ack policy, 1 for a
// pause or priority groups, else 0.
func SetConsumerRequiredLevel(cfg *api.ConsumerConfig) {
	if cfg.Metadata == nil {
		cfg.Metadata = map[string]string{}
	}
	delete(cfg.Metadata, api.MetaServerLevel)
	delete(cfg.Metadata, api.MetaServerVersion)
	set := func(raw json.RawMessage) bool {
		v := strings.TrimSpace(string(raw))
		return v != "" && v != "null" && v != `""` && v != `"none"` && v != "[]"
	}
	level := 0
	if (cfg.PauseUntil != nil && !cfg.PauseUntil.IsZero()) || set(cfg.PriorityPolicy) || set(cfg.PriorityGroups) || cfg.PinnedTTL != 0 {
		level = 1
	}
	if cfg.AckPolicy == api.AckFlowControl {
		level = 4
	}
	cfg.Metadata[api.MetaRequiredLevel] = strconv.Itoa(level)
}
