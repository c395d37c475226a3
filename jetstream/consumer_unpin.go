package jetstream

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
)

// apiUnpin serves CONSUMER.UNPIN.<stream>.<consumer> {"group": name},
// checked as nats-server checks it: the pinned client of a pinned_client
// consumer loses its pin (an unpinned advisory, reason "admin"), and the
// next pull request without a pin id gets a new one.
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
	if !validate.ValidGroupName.MatchString(req.Group) {
		fail(api.NewError(api.ErrConsumerInvalidGroupName))
		return
	}
	_, c, aerr := cm.consumerArgs(r)
	if aerr != nil {
		fail(aerr)
		return
	}
	c.mu.Lock()
	if !slices.Contains(c.prio.groups, req.Group) {
		c.mu.Unlock()
		fail(api.NewError(api.ErrConsumerInvalidPriorityGroup))
		return
	}
	c.unpin("admin")
	events := c.takePinEvents()
	c.mu.Unlock()
	c.advisePins(events)
	c.signal()
	cm.js.respond(r, api.Response{Type: typ}, false)
}
