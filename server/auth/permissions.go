package auth

import (
	"fmt"
	"time"

	"github.com/jetwal/jetwal/subject"
)

// SubjectPermission lists the subject filters a user may (Allow) and may
// not (Deny) use. An empty Allow allows everything not denied.
type SubjectPermission struct {
	Allow []string
	Deny  []string
}

// ResponsePermission lets a user publish to the reply subject of each
// request it receives, even without publish permission: at most MaxMsgs
// replies per request (0 means 1), within Expires of receiving it (0 means
// no limit). This is nats-server's allow_responses.
type ResponsePermission struct {
	MaxMsgs int
	Expires time.Duration
}

// Permissions are what a user may publish and subscribe to. A nil field
// means no restriction of that kind.
type Permissions struct {
	Publish   *SubjectPermission
	Subscribe *SubjectPermission
	Response  *ResponsePermission
}

// DefaultResponseMaxMsgs and DefaultResponseExpires are nats-server's
// defaults for allow_responses: true.
const (
	DefaultResponseMaxMsgs = 1
	DefaultResponseExpires = 2 * time.Minute
)

// Validate reports a filter that is not a valid subject filter.
func (p *Permissions) Validate() error {
	if p == nil {
		return nil
	}
	for _, sp := range []struct {
		kind string
		p    *SubjectPermission
	}{{"publish", p.Publish}, {"subscribe", p.Subscribe}} {
		if sp.p == nil {
			continue
		}
		for _, list := range [][]string{sp.p.Allow, sp.p.Deny} {
			for _, f := range list {
				if !validPermSubject(f) {
					return fmt.Errorf("%s permission: invalid subject %q", sp.kind, f)
				}
			}
		}
	}
	if r := p.Response; r != nil && (r.MaxMsgs < 0 || r.Expires < 0) {
		return fmt.Errorf("allow_responses: negative max or expires")
	}
	return nil
}

// validPermSubject accepts a subject filter, optionally followed by a
// space and a queue name (nats-server's "subject queue" form for
// subscribe permissions is not supported; only plain filters).
func validPermSubject(f string) bool { return subject.ValidFilter(f) }

// Clone returns a deep copy of p (nil for nil).
func (p *Permissions) Clone() *Permissions {
	if p == nil {
		return nil
	}
	c := &Permissions{}
	if p.Publish != nil {
		c.Publish = &SubjectPermission{Allow: append([]string(nil), p.Publish.Allow...), Deny: append([]string(nil), p.Publish.Deny...)}
	}
	if p.Subscribe != nil {
		c.Subscribe = &SubjectPermission{Allow: append([]string(nil), p.Subscribe.Allow...), Deny: append([]string(nil), p.Subscribe.Deny...)}
	}
	if p.Response != nil {
		r := *p.Response
		c.Response = &r
	}
	return c
}
