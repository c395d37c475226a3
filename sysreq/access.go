package sysreq

import (
	"strings"

	"github.com/jetwal/jetwal/server/auth"
)

// sysDeny is what a user who is not a system user may not publish to.
const sysDeny = "$SYS.>"

// RestrictAuth returns o with publishing and subscribing to $SYS.> denied
// to every user whose publish permissions do not explicitly allow a
// subject under $SYS, so only the users meant to see every server's state
// ("system users") can send $SYS.REQ requests or watch the connection
// events. Without authentication o is returned
// unchanged: anyone may ask. The permissions of o are not modified.
func RestrictAuth(o auth.Options) auth.Options {
	if !o.Enabled() {
		return o
	}
	o.Permissions = restrict(o.Permissions)
	users := make([]auth.User, len(o.Users))
	for i, u := range o.Users {
		if u.Permissions != nil {
			u.Permissions = restrict(u.Permissions)
		}
		users[i] = u
	}
	o.Users = users
	nkeys := make([]auth.NkeyUser, len(o.Nkeys))
	for i, u := range o.Nkeys {
		if u.Permissions != nil {
			u.Permissions = restrict(u.Permissions)
		}
		nkeys[i] = u
	}
	o.Nkeys = nkeys
	return o
}

// IsSystem reports whether p explicitly allows publishing under $SYS.
func IsSystem(p *auth.Permissions) bool {
	if p == nil || p.Publish == nil {
		return false
	}
	for _, a := range p.Publish.Allow {
		if a == "$SYS" || strings.HasPrefix(a, "$SYS.") {
			return true
		}
	}
	return false
}

// restrict returns a copy of p (nil = no restriction) that denies $SYS.>
// (publish and subscribe) unless p makes its holder a system user.
func restrict(p *auth.Permissions) *auth.Permissions {
	if IsSystem(p) {
		return p
	}
	var out auth.Permissions
	if p != nil {
		out = *p
	}
	pub := auth.SubjectPermission{}
	if out.Publish != nil {
		pub.Allow = append([]string(nil), out.Publish.Allow...)
		pub.Deny = append([]string(nil), out.Publish.Deny...)
	}
	pub.Deny = append(pub.Deny, sysDeny)
	out.Publish = &pub
	sub := auth.SubjectPermission{}
	if out.Subscribe != nil {
		sub.Allow = append([]string(nil), out.Subscribe.Allow...)
		sub.Deny = append([]string(nil), out.Subscribe.Deny...)
	}
	sub.Deny = append(sub.Deny, sysDeny)
	out.Subscribe = &sub
	return &out
}
