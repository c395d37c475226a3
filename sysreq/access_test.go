package sysreq

import (
	"slices"
	"testing"

	"github.com/jetwal/jetwal/server/auth"
)

func TestRestrictAuth(t *testing.T) {
	open := auth.Options{}
	if got := RestrictAuth(open); got.Permissions != nil {
		t.Fatalf("no auth: permissions %+v", got.Permissions)
	}
	sys := &auth.Permissions{Publish: &auth.SubjectPermission{Allow: []string{"$SYS.REQ.>", ">"}}}
	app := &auth.Permissions{Publish: &auth.SubjectPermission{Allow: []string{"orders.>"}, Deny: []string{"orders.secret"}},
		Subscribe: &auth.SubjectPermission{Allow: []string{"_INBOX.>"}}}
	o := auth.Options{
		Users: []auth.User{{Username: "plain"}, {Username: "sys", Permissions: sys}, {Username: "app", Permissions: app}},
		Nkeys: []auth.NkeyUser{{Nkey: "UA"}, {Nkey: "UB", Permissions: sys}},
	}
	got := RestrictAuth(o)
	// Users without permissions of their own fall back to the defaults,
	// which now deny $SYS.
	if d := got.Permissions; d == nil || !slices.Equal(d.Publish.Deny, []string{"$SYS.>"}) || !slices.Equal(d.Subscribe.Deny, []string{"$SYS.>"}) ||
		len(d.Publish.Allow) != 0 || len(d.Subscribe.Allow) != 0 {
		t.Errorf("defaults %+v", got.Permissions)
	}
	if got.Users[0].Permissions != nil || got.Nkeys[0].Permissions != nil {
		t.Error("a user without permissions got some of its own (it must keep the defaults)")
	}
	if got.Users[1].Permissions != sys || got.Nkeys[1].Permissions != sys {
		t.Error("a system user was restricted")
	}
	a := got.Users[2].Permissions
	if !slices.Equal(a.Publish.Allow, []string{"orders.>"}) || !slices.Equal(a.Publish.Deny, []string{"orders.secret", "$SYS.>"}) ||
		!slices.Equal(a.Subscribe.Allow, []string{"_INBOX.>"}) || !slices.Equal(a.Subscribe.Deny, []string{"$SYS.>"}) {
		t.Errorf("app %+v %+v", a.Publish, a.Subscribe)
	}
	// The caller's options are not modified.
	if len(app.Publish.Deny) != 1 || app.Subscribe.Deny != nil || o.Permissions != nil || o.Users[2].Permissions != app {
		t.Error("RestrictAuth modified its argument")
	}
	got.Nkeys = nil // (not real keys)
	if _, err := auth.New(got); err != nil {
		t.Errorf("restricted options do not build: %v", err)
	}
	// Default permissions that name $SYS make every default user a system user.
	o.Permissions = sys
	if got := RestrictAuth(o); got.Permissions != sys {
		t.Error("system default permissions were restricted")
	}
}
