package sysreq

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/jetwal/jetwal/monitor"
)

// TestConnzLimitAndCID: as nats-server's, a CONNZ request with a limit <= 0
// uses the default limit (1024), a negative offset is 0, a cid that is not
// an unsigned integer is answered with the decoder's 400 error in the
// envelope, and a cid lists that one connection with limit 1 — on the
// PING, the server id and the account forms alike.
func TestConnzLimitAndCID(t *testing.T) {
	s := startNode(t, "solo", nil)
	nc := connectSys(t, s)
	app := connect(t, s) // the no-auth user app of $G
	if err := app.Flush(); err != nil {
		t.Fatal(err)
	}
	cids := map[string]uint64{}
	for _, c := range s.Connections() {
		cids[c.Account] = c.CID
	}
	appCID := cids[monitor.GlobalAccount]
	if appCID == 0 {
		t.Fatalf("no $G connection in %+v", s.Connections())
	}
	for _, subj := range []string{
		"$SYS.REQ.SERVER.PING.CONNZ",
		"$SYS.REQ.SERVER." + s.ID() + ".CONNZ",
		"$SYS.REQ.ACCOUNT.$G.CONNZ",
	} {
		for _, body := range []string{`{"limit":-1}`, `{"limit":-1,"offset":-3}`, `{"limit":0}`} {
			var r envelope[monitor.Connz]
			request(t, nc, subj, body, &r)
			if r.Error != nil || r.Data == nil {
				t.Fatalf("%s %s: %+v", subj, body, r.Error)
			}
			if r.Data.Limit != monitor.DefaultConnListSize || r.Data.Offset != 0 || r.Data.NumConns == 0 {
				t.Errorf("%s %s: limit %d offset %d conns %d, want limit %d offset 0 and connections",
					subj, body, r.Data.Limit, r.Data.Offset, r.Data.NumConns, monitor.DefaultConnListSize)
			}
		}

		var r envelope[json.RawMessage]
		request(t, nc, subj, `{"cid":-5}`, &r)
		want := "json: cannot unmarshal number -5 into Go struct field ConnzEventOptions.ConnzOptions.cid of type uint64"
		if r.Error == nil || r.Error.Code != http.StatusBadRequest || r.Error.Description != want || r.Data != nil {
			t.Errorf("%s cid -5: %+v, want 400 %q", subj, r.Error, want)
		}
		if r.Server == nil || r.Server.ID != s.ID() {
			t.Errorf("%s cid -5: no server block", subj)
		}

		var c envelope[monitor.Connz]
		request(t, nc, subj, fmt.Sprintf(`{"cid":%d}`, appCID), &c)
		if c.Error != nil || c.Data == nil || c.Data.Limit != 1 || len(c.Data.Conns) != 1 || c.Data.Conns[0].Cid != appCID {
			t.Errorf("%s cid %d: %+v %+v", subj, appCID, c.Error, c.Data)
		}
	}
	// An account-scoped request does not show another account's
	// connection by its cid.
	var c envelope[monitor.Connz]
	request(t, nc, "$SYS.REQ.ACCOUNT.SYS.CONNZ", fmt.Sprintf(`{"cid":%d}`, appCID), &c)
	if c.Error != nil || c.Data == nil || len(c.Data.Conns) != 0 {
		t.Errorf("SYS account connz of a $G cid: %+v %+v", c.Error, c.Data)
	}
}
