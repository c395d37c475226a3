package server

import (
	"strconv"
	"sync"
	"time"

	"github.com/jetwal/jetwal/server/auth"
	"github.com/jetwal/jetwal/server/sublist"
	"github.com/jetwal/jetwal/subject"
)

// Permissions. A client whose user has auth.Permissions gets a clientPerms
// at CONNECT. Publishing to a subject it may not gets
// -ERR 'Permissions Violation for Publish to "<subject>"' and the message
// is dropped; a SUB it may not make gets
// -ERR 'Permissions Violation for Subscription to "<subject>"'; in both
// cases the connection stays up, as in nats-server.
//
// Allow and deny lists are sublists of filters. A literal subject is
// allowed when some allow filter matches it and no deny filter does. A
// wildcard subscription is allowed when some allow filter covers all of it;
// when it only overlaps a deny filter it is accepted and messages on denied
// subjects are not delivered to it (subscription.deny).
//
// Publish decisions are cached per client (the read goroutine's own map,
// bounded). With allow_responses, a client may also publish to the reply
// subject of a request it received, within the limits of
// auth.ResponsePermission; those decisions are not cached.

// Each list is rebuilt from auth.Permissions per connection; the filters are
// few, and a sublist match is what the publish path already pays.

func permPubViolation(subj []byte) string {
	return "Permissions Violation for Publish to " + strconv.Quote(string(subj))
}

func permSubViolation(subj []byte) string {
	return "Permissions Violation for Subscription to " + strconv.Quote(string(subj))
}

// pubCacheMax bounds a client's cache of publish decisions.
const pubCacheMax = 1024

// respMax bounds the reply subjects remembered for allow_responses.
const respMax = 4096

// permSet is one direction (publish or subscribe) of a user's permissions.
type permSet struct {
	allowAll bool                  // no allow list: everything not denied
	allow    *sublist.List[string] // values are the filters
	deny     *sublist.List[string] // nil when nothing is denied
}

func newPermSet(p *auth.SubjectPermission, denyAllByDefault bool) *permSet {
	ps := &permSet{allowAll: true}
	if p == nil {
		ps.allowAll = !denyAllByDefault
		return ps
	}
	if p.Allow != nil || denyAllByDefault {
		ps.allowAll = false
		ps.allow = sublist.New[string](sublist.Options{CacheSize: -1})
		for _, f := range p.Allow {
			_ = ps.allow.Insert(f, "", f) // validated by auth.New
		}
	}
	if len(p.Deny) > 0 {
		ps.deny = sublist.New[string](sublist.Options{CacheSize: -1})
		for _, f := range p.Deny {
			_ = ps.deny.Insert(f, "", f)
		}
	}
	return ps
}

// publishAllowed decides for a literal subject.
func (ps *permSet) publishAllowed(subj string) bool {
	if !ps.allowAll && (ps.allow == nil || ps.allow.MatchOnce(subj).Empty()) {
		return false
	}
	return ps.deny == nil || ps.deny.MatchOnce(subj).Empty()
}

// subscribeAllowed decides for a filter; overlapsDeny reports a wildcard
// filter that is allowed but covers denied subjects.
func (ps *permSet) subscribeAllowed(filter string) (ok, overlapsDeny bool) {
	if !ps.allowAll {
		// The filter's wildcards match as literal tokens, so every allow
		// filter that covers the whole filter is in the result; keep only
		// those that really do.
		covered := false
		if ps.allow != nil {
			for _, f := range ps.allow.MatchOnce(filter).Plain {
				if subject.SubsetOf(filter, f) {
					covered = true
					break
				}
			}
		}
		if !covered {
			return false, false
		}
	}
	if ps.deny == nil {
		return true, false
	}
	if !ps.deny.MatchOnce(filter).Empty() {
		return false, false
	}
	if subject.IsLiteral(filter) {
		return true, false
	}
	return true, true
}

// clientPerms are one client's compiled permissions.
type clientPerms struct {
	pub, sub *permSet
	resp     *auth.ResponsePermission

	pubCache map[string]bool // read goroutine only

	replies struct {
		sync.Mutex
		// Guarded by the mutex above: reply subjects of requests delivered
		// to this client (allow_responses).
		m map[string]respEntry
	}
}

type respEntry struct {
	left    int       // replies still allowed
	expires time.Time // zero = never
}

func newClientPerms(p *auth.Permissions) *clientPerms {
	cp := &clientPerms{resp: p.Response, pubCache: make(map[string]bool)}
	// As in nats-server, allow_responses without a publish allow list
	// means the client may publish nothing but replies.
	cp.pub = newPermSet(p.Publish, p.Response != nil && (p.Publish == nil || p.Publish.Allow == nil))
	cp.sub = newPermSet(p.Subscribe, false)
	if cp.resp != nil {
		cp.replies.m = make(map[string]respEntry)
	}
	return cp
}

// canPublish decides for subj (read goroutine).
func (cp *clientPerms) canPublish(subj []byte) bool {
	ok, cached := cp.pubCache[bytesView(subj)]
	if !cached {
		s := string(subj)
		ok = cp.pub.publishAllowed(s)
		if len(cp.pubCache) >= pubCacheMax {
			clear(cp.pubCache)
		}
		cp.pubCache[s] = ok
	}
	if !ok && cp.resp != nil {
		return cp.useReply(subj)
	}
	return ok
}

// noteReply remembers the reply subject of a request delivered to this
// client (any publishing goroutine).
func (cp *clientPerms) noteReply(reply []byte) {
	n := cp.resp.MaxMsgs
	if n <= 0 {
		n = auth.DefaultResponseMaxMsgs
	}
	var exp time.Time
	now := time.Now()
	if cp.resp.Expires > 0 {
		exp = now.Add(cp.resp.Expires)
	}
	cp.replies.Lock()
	defer cp.replies.Unlock()
	if len(cp.replies.m) >= respMax {
		for k, e := range cp.replies.m {
			if !e.expires.IsZero() && now.After(e.expires) {
				delete(cp.replies.m, k)
			}
		}
		if len(cp.replies.m) >= respMax {
			clear(cp.replies.m) // oldest requests lose their right to a reply
		}
	}
	cp.replies.m[string(reply)] = respEntry{left: n, expires: exp}
}

// useReply consumes one reply to subj if a request allowed it.
func (cp *clientPerms) useReply(subj []byte) bool {
	cp.replies.Lock()
	defer cp.replies.Unlock()
	e, ok := cp.replies.m[bytesView(subj)]
	if !ok {
		return false
	}
	if !e.expires.IsZero() && time.Now().After(e.expires) {
		delete(cp.replies.m, string(subj))
		return false
	}
	e.left--
	if e.left <= 0 {
		delete(cp.replies.m, string(subj))
	} else {
		cp.replies.m[string(subj)] = e
	}
	return true
}
