package server

import "testing"

// TestRoutesBrief: RoutesBrief names each route as Routes does (its
// remote, its route URL) but leaves out the remote's interest, which is
// what makes Routes cost milliseconds on a server with thousands of
// subscriptions.
func TestRoutesBrief(t *testing.T) {
	s := startMesh(t, 2)
	nc := connect(t, s[1])
	if _, err := nc.SubscribeSync("brief.x"); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "remote interest", func() bool { return hasRemoteInterest(s[0], "brief.x") })
	full, brief := s[0].Routes(), s[0].RoutesBrief()
	if len(full) != 1 || len(brief) != 1 {
		t.Fatalf("routes: %d full, %d brief; want 1 each", len(full), len(brief))
	}
	f, b := full[0], brief[0]
	if b.RemoteName != "s1" || b.RemoteName != f.RemoteName || b.RouteURL != f.RouteURL || b.RouteURL == "" || b.RID != f.RID {
		t.Fatalf("brief %+v does not name the route as full %+v does", b, f)
	}
	if len(f.Subs) == 0 || b.Subs != nil {
		t.Fatalf("subs: full %v, brief %v; want some in full and none in brief", f.Subs, b.Subs)
	}
}
