package jetstream

import (
	"slices"
	"time"

	"github.com/nats-io/nuid"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/natshdr"
)

// Priority groups (priority_policy, priority_groups, priority_timeout), as
// nats-server 2.15 serves them to pull consumers:
//
//   - overflow: a pull request with min_pending or min_ack_pending gets
//     messages only while the consumer has at least that many pending (or
//     awaiting ack); other requests are served as usual.
//   - pinned_client: one request's client is pinned: its pull requests
//     carry the pin id the server sent in the Nats-Pin-Id header, and only
//     they get messages. A request with another id gets 423. When the
//     pinned client makes no request for priority_timeout (default 2m), or
//     on CONSUMER.UNPIN, the pin goes and the next request without an id is
//     pinned. Pinned and unpinned advisories are sent.
//   - prioritized: waiting requests are served lowest "priority" (0-9)
//     first.
//
// jetwal, like nats-server today, pins one client per consumer whatever
// the group named.

// priority is a consumer's priority state. Guarded by the consumer's mu.
type priority struct {
	policy   validate.PriorityPolicy
	groups   []string
	ttl      time.Duration
	pinID    string    // the pinned client's id; "" none
	pinGroup string    // the group it was pinned in
	pinnedAt time.Time // when
	deadline int64     // unix ns: unpinned unless it pulls again before
	events   []pinEvent
}

// pinEvent is a pinned or unpinned advisory to send once unlocked.
type pinEvent struct {
	group, pinID, reason string // reason "" = pinned
}

// setPriority installs the priority settings of a (new) config; a changed
// policy or group list drops the pin. Caller holds mu or owns c.
func (c *consumer) setPriority(cfg *api.ConsumerConfig) {
	p, groups, _ := validate.ParsePriority(cfg) // checked by validate.Consumer
	if c.prio.policy != p || !slices.Equal(c.prio.groups, groups) {
		c.prio = priority{}
	}
	c.prio.policy, c.prio.groups, c.prio.ttl = p, groups, cfg.PinnedTTL
}

// checkPullPriority checks the priority part of a new pull request, as
// nats-server does before queueing it; "" accepts it. Caller holds mu.
func (c *consumer) checkPullPriority(req *api.NextRequest, now int64) string {
	if !req.JSON {
		return ""
	}
	p := c.prio.policy
	switch {
	case (req.MinPending != 0 || req.MinAckPending != 0) && p != validate.PrioOverflow:
		return "400 Bad Request - Not a Overflow Priority consumer"
	case req.ID != "" && p != validate.PrioPinned:
		return "400 Bad Request - Not a Pinned Client Priority consumer"
	case req.Priority < 0 || req.Priority > 9:
		return "400 Bad Request - Priority must be between 0 and 9"
	case p == validate.PrioNone:
		return ""
	case req.Group == "":
		return "400 Bad Request - Priority Group missing"
	case !slices.Contains(c.prio.groups, req.Group):
		return "400 Bad Request - Invalid Priority Group"
	}
	if c.prio.pinID != "" {
		if req.ID == c.prio.pinID {
			c.prio.deadline = addSat(now, int64(c.prio.ttl))
		} else if req.ID != "" {
			return "423 Nats-Pin-Id mismatch"
		}
	}
	return ""
}

// pickRequest returns the index of the waiting request the next message
// goes to, or -1 if none may have it now. Requests holding a stale pin id
// are answered with 423 and dropped. Caller holds mu.
func (c *consumer) pickRequest(st *consumerstate.State, now int64) int {
	switch c.prio.policy {
	case validate.PrioOverflow:
		var pending uint64
		counted := false
		for i, w := range c.waiting {
			if w.minPending <= 0 && w.minAckPending <= 0 {
				return i
			}
			if !counted {
				pending, counted = c.numPending(st), true
			}
			if (w.minPending > 0 && uint64(w.minPending) <= pending) ||
				(w.minAckPending > 0 && w.minAckPending <= int64(c.ackPending(st))) {
				return i
			}
		}
		return -1
	case validate.PrioPinned:
		if c.prio.pinID != "" && now >= c.prio.deadline {
			c.unpin("timeout")
		}
		for i := 0; i < len(c.waiting); i++ {
			w := c.waiting[i]
			switch {
			case c.prio.pinID != "" && w.pinID == c.prio.pinID:
				return i
			case c.prio.pinID != "" && w.pinID == "":
				continue // waits for the pin to go
			case w.pinID != "":
				// A pin id that is not (or no longer) the pin.
				c.outs = append(c.outs, statusMsg(w.reply, "423 Nats-Wrong-Pin-Id", w.batch, w.bytesLeft))
				c.removeRequest(i)
				i--
			default:
				if w.group != "" {
					c.pin(w, now)
				}
				return i
			}
		}
		return -1
	case validate.PrioPrioritized:
		best := -1
		for i, w := range c.waiting {
			if best < 0 || w.priority < c.waiting[best].priority {
				best = i
			}
		}
		return best
	}
	if len(c.waiting) == 0 {
		return -1
	}
	return 0
}

// pin makes w's client the pinned one. Caller holds mu.
func (c *consumer) pin(w *pullRequest, now int64) {
	c.prio.pinID, c.prio.pinGroup = nuid.Next(), w.group
	c.prio.pinnedAt = time.Unix(0, now).UTC()
	c.prio.deadline = addSat(now, int64(c.prio.ttl))
	w.pinID = c.prio.pinID
	c.prio.events = append(c.prio.events, pinEvent{group: w.group, pinID: c.prio.pinID})
}

// unpin drops the pin for reason ("timeout" or "admin"). Caller holds mu.
func (c *consumer) unpin(reason string) {
	if c.prio.pinID == "" {
		return
	}
	c.prio.events = append(c.prio.events, pinEvent{group: c.prio.pinGroup, reason: reason})
	c.prio.pinID, c.prio.pinGroup, c.prio.pinnedAt, c.prio.deadline = "", "", time.Time{}, 0
}

// pinHeader adds Nats-Pin-Id to a message's header block for a pinned
// delivery.
func pinHeader(hdr []byte, pinID string) []byte {
	b := natshdr.Reopen(make([]byte, 0, len(hdr)+len(pinID)+32), hdr)
	b = natshdr.AppendString(b, "Nats-Pin-Id", pinID)
	return natshdr.End(b)
}

// takePinEvents returns the advisories to send. Caller holds mu.
func (c *consumer) takePinEvents() []pinEvent {
	ev := c.prio.events
	c.prio.events = nil
	return ev
}

// advisePins sends pinned and unpinned advisories; mu not held.
func (c *consumer) advisePins(events []pinEvent) {
	for _, e := range events {
		tail := c.s.name + "." + c.name
		if e.reason == "" {
			subj := api.SubjAdvisoryConsumerPinned + tail
			if c.env.listening(subj) {
				c.env.publishEvent(subj, api.ConsumerGroupPinned{TypedEvent: newEvent(api.TypeAdvisoryConsumerPinned),
					Stream: c.s.name, Consumer: c.name, Domain: c.env.cfg.Domain, Group: e.group, PinnedID: e.pinID})
			}
			continue
		}
		subj := api.SubjAdvisoryConsumerUnpinned + tail
		if c.env.listening(subj) {
			c.env.publishEvent(subj, api.ConsumerGroupUnpinned{TypedEvent: newEvent(api.TypeAdvisoryConsumerUnpinned),
				Stream: c.s.name, Consumer: c.name, Domain: c.env.cfg.Domain, Group: e.group, Reason: e.reason})
		}
	}
}

// priorityInfo is the priority_groups of consumer info. Caller holds mu.
func (c *consumer) priorityInfo() []api.PriorityGroupState {
	if len(c.prio.groups) == 0 {
		return nil
	}
	return []api.PriorityGroupState{{Group: c.prio.groups[0], PinnedClientID: c.prio.pinID, PinnedTS: c.prio.pinnedAt}}
}
