package jetstream

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// validGroupName is nats-server's rule for a priority group name.
var validGroupName = regexp.MustCompile(`^[a-zA-Z0-9/_=-]{1,16}$`)

// apiUnpin serves CONSUMER.UNPIN.<stream>.<consumer> {"group": name},
// checked as nats-server checks it. jetwal keeps priority groups without
// pinning clients, so a valid request has nothing to undo and succeeds.
func (cm *consumerManager) apiUnpin(r *apiRequest) {
	const typ = api.TypeConsumerUnpin
	fail := func(aerr *api.ApiError) { cm.js.respondError(r, typ, aerr) }
	i := strings.IndexByte(r.args, '.')
	if i <= 0 || i == len(r.args)-1 || strings.IndexByte(r.args[i+1:], '.') >= 0 {
		cm.js.respondError(r, api.TypeError, api.Errorf(api.ErrBadRequest, "unknown JetStream API request %q", r.subject))
		return
	}
	var req api.ConsumerUnpinRequest
	if err := json.Unmarshal(r.data, &req); err != nil {
		fail(api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err))
		return
	}
	if req.Group == "" {
		fail(api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", errors.New("consumer group not specified")))
		return
	}
	if !validGroupName.MatchString(req.Group) {
		fail(api.NewError(api.ErrConsumerInvalidGroupName))
		return
	}
	_, c, aerr := cm.consumerArgs(r)
	if aerr != nil {
		fail(aerr)
		return
	}
	c.mu.Lock()
	raw := c.cfg.PriorityGroups
	c.mu.Unlock()
	var groups []string
	_ = json.Unmarshal(raw, &groups) // absent or malformed: no groups
	for _, g := range groups {
		if g == req.Group {
			cm.js.respond(r, api.Response{Type: typ}, false)
			return
		}
	}
	fail(api.NewError(api.ErrConsumerInvalidPriorityGroup))
}
