package validate

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// The priority settings of pull consumers (jetstream/consumer_priority.go
// serves them).

// PriorityPolicy is a consumer's priority_policy.
type PriorityPolicy uint8

const (
	PrioNone PriorityPolicy = iota
	PrioOverflow
	PrioPinned
	PrioPrioritized
)

const DefaultPinnedTTL = 2 * time.Minute

// ValidGroupName is nats-server's rule for a priority group name.
var ValidGroupName = regexp.MustCompile(`^[a-zA-Z0-9/_=-]{1,16}$`)

// ParsePriority reads the policy and groups of a config.
func ParsePriority(cfg *api.ConsumerConfig) (PriorityPolicy, []string, *api.ApiError) {
	var p PriorityPolicy
	if raw := strings.TrimSpace(string(cfg.PriorityPolicy)); raw != "" && raw != "null" {
		var name string
		if err := json.Unmarshal(cfg.PriorityPolicy, &name); err != nil {
			return 0, nil, api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err)
		}
		switch name {
		case "", "none":
		case "overflow":
			p = PrioOverflow
		case "pinned_client":
			p = PrioPinned
		case "prioritized":
			p = PrioPrioritized
		default:
			return 0, nil, api.Errorf(api.ErrInvalidJSON, "invalid JSON: unknown priority policy: %s", raw)
		}
	}
	var groups []string
	if raw := strings.TrimSpace(string(cfg.PriorityGroups)); raw != "" && raw != "null" {
		if err := json.Unmarshal(cfg.PriorityGroups, &groups); err != nil {
			return 0, nil, api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err)
		}
	}
	return p, groups, nil
}

// checkPriority refuses the priority settings nats-server refuses.
func checkPriority(cfg *api.ConsumerConfig) *api.ApiError {
	p, groups, aerr := ParsePriority(cfg)
	if aerr != nil {
		return aerr
	}
	if p == PrioNone {
		switch {
		case len(groups) > 0:
			return api.NewError(api.ErrConsumerGroupWithPolicyNone)
		case cfg.PinnedTTL > 0:
			return api.NewError(api.ErrConsumerPinnedTTLWithoutPolicy)
		}
		return nil
	}
	if cfg.DeliverSubject != "" {
		return api.NewError(api.ErrConsumerPushWithPriority)
	}
	if len(groups) == 0 {
		return api.NewError(api.ErrConsumerPolicyWithoutGroup)
	}
	for _, g := range groups {
		if g == "" {
			return api.NewError(api.ErrConsumerEmptyGroupName)
		}
		if !ValidGroupName.MatchString(g) {
			return api.NewError(api.ErrConsumerInvalidGroupName)
		}
	}
	return nil
}

// priorityDefaults fills in priority_timeout for a pinned_client policy.
func priorityDefaults(cfg *api.ConsumerConfig) {
	if p, _, _ := ParsePriority(cfg); p == PrioPinned && cfg.PinnedTTL == 0 {
		cfg.PinnedTTL = DefaultPinnedTTL
	}
}
