package sysreq

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/monitor"
	"github.com/nats-io/nats.go"
)

// envelope decodes a Response with its data as T.
type envelope[T any] struct {
	Server *ServerInfo `json:"server"`
	Data   *T          `json:"data"`
	Error  *APIError   `json:"error"`
}

func TestPingStatsz(t *testing.T) {
	s := startNode(t, "solo", nil)
	nc := connectSys(t, s)
	var sm StatsMsg
	request(t, nc, "$SYS.REQ.SERVER.PING", "", &sm)
	if sm.Server.Name != "solo" || sm.Server.ID != s.ID() || sm.Server.Version == "" || sm.Server.Time.IsZero() || sm.Server.Seq == 0 {
		t.Errorf("server block %+v", sm.Server)
	}
	if sm.Stats.Connections != 1 || sm.Stats.Start.IsZero() || sm.Stats.Cores == 0 || sm.Stats.NumSubs == 0 {
		t.Errorf("statsz %+v", sm.Stats)
	}
	var again StatsMsg
	request(t, nc, "$SYS.REQ.SERVER.PING.STATSZ", "{}", &again)
	if again.Server.Seq <= sm.Server.Seq {
		t.Errorf("seq did not grow: %d then %d", sm.Server.Seq, again.Server.Seq)
	}
}

func TestEveryKindByID(t *testing.T) {
	s := startNode(t, "solo", nil)
	nc := connect(t, s, nats.UserInfo("sys", "pw"), nats.Name("probe"))
	prefix := "$SYS.REQ.SERVER." + s.ID() + "."

	var v envelope[monitor.Varz]
	request(t, nc, prefix+"VARZ", "", &v)
	if v.Error != nil || v.Data == nil || v.Data.ID != s.ID() || v.Data.Name != "solo" || v.Server.ID != s.ID() {
		t.Errorf("VARZ %+v", v)
	}
	var j envelope[monitor.JSInfo]
	request(t, nc, prefix+"JSZ", `{"accounts":true,"streams":true}`, &j)
	if j.Error != nil || j.Data == nil || !j.Data.Disabled || j.Server.JetStream {
		t.Errorf("JSZ without JetStream %+v", j)
	}
	var c envelope[monitor.Connz]
	request(t, nc, prefix+"CONNZ", `{"sort":"cid","limit":10}`, &c)
	if c.Error != nil || c.Data == nil || c.Data.NumConns != 1 || c.Data.Conns[0].Name != "probe" || c.Data.Conns[0].Account != "SYS" || c.Data.Limit != 10 {
		t.Errorf("CONNZ %+v", c.Data)
	}
	var h envelope[monitor.HealthStatus]
	request(t, nc, prefix+"HEALTHZ", "", &h)
	if h.Error != nil || h.Data == nil || h.Data.Status != "ok" || h.Data.StatusCode != http.StatusOK {
		t.Errorf("HEALTHZ %+v", h.Data)
	}
	var sz envelope[monitor.Subsz]
	request(t, nc, prefix+"SUBSZ", "", &sz)
	if sz.Error != nil || sz.Data == nil || sz.Data.NumSubs == 0 {
		t.Errorf("SUBSZ %+v", sz.Data)
	}
	var rz envelope[monitor.Routez]
	request(t, nc, prefix+"ROUTEZ", "", &rz)
	if rz.Error != nil || rz.Data == nil || rz.Data.NumRoutes != 0 || rz.Data.Name != "solo" {
		t.Errorf("ROUTEZ %+v", rz.Data)
	}
	var id ServerID
	request(t, nc, prefix+"IDZ", "", &id)
	if id.ID != s.ID() || id.Name != "solo" || id.Host != "127.0.0.1" {
		t.Errorf("IDZ %+v", id)
	}
	// A request for another server's id reaches nobody.
	if _, err := nc.Request("$SYS.REQ.SERVER.NOTASERVER.VARZ", nil, 2*time.Second); err != nats.ErrNoResponders {
		t.Errorf("request to an unknown server id: %v, want no responders", err)
	}
}

// TestBadOptions: malformed or ill-typed options get an error answer with
// code 400 (and a bad sort 500, as nats-server), and the service keeps
// answering.
func TestBadOptions(t *testing.T) {
	s := startNode(t, "solo", nil)
	nc := connectSys(t, s)
	for _, tc := range []struct{ subj, body string }{
		{"$SYS.REQ.SERVER.PING", "{"},
		{"$SYS.REQ.SERVER.PING.STATSZ", "not json"},
		{"$SYS.REQ.SERVER.PING.JSZ", `{"accounts":"yes"}`},
		{"$SYS.REQ.SERVER.PING.CONNZ", `{"limit":-1`},
		{"$SYS.REQ.SERVER.PING.VARZ", `[1,2]`},
		{"$SYS.REQ.SERVER.PING.ROUTEZ", `{"server_name":7}`},
	} {
		var r envelope[json.RawMessage]
		request(t, nc, tc.subj, tc.body, &r)
		if r.Error == nil || r.Error.Code != http.StatusBadRequest || r.Error.Description == "" || r.Data != nil {
			t.Errorf("%s %q: %+v", tc.subj, tc.body, r.Error)
		}
		if r.Server == nil || r.Server.ID != s.ID() {
			t.Errorf("%s %q: no server block", tc.subj, tc.body)
		}
	}
	var r envelope[json.RawMessage]
	request(t, nc, "$SYS.REQ.SERVER.PING.CONNZ", `{"sort":"nonsense"}`, &r)
	if r.Error == nil || r.Error.Code != http.StatusInternalServerError || !strings.Contains(r.Error.Description, "nonsense") {
		t.Errorf("bad sort: %+v", r.Error)
	}
	var v envelope[monitor.Varz]
	request(t, nc, "$SYS.REQ.SERVER.PING.VARZ", "", &v)
	if v.Data == nil || v.Error != nil {
		t.Errorf("after bad requests: %+v", v)
	}
}

// TestFilter: a request naming another server is not answered, one naming
// this server is. Both go to one inbox; answers are made in order, so the
// first answer seen must be the second request's.
func TestFilter(t *testing.T) {
	s := startNode(t, "alpha", nil)
	nc := connectSys(t, s)
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"server_name":"beta"}`,
		`{"server_name":"alp","exact_match":true}`,
		`{"tags":["x"]}`,
		`{"domain":"hub"}`,
		`{"cluster":"nope"}`,
		`{"server_name":"alp"}`,
	} {
		if err := nc.PublishRequest("$SYS.REQ.SERVER.PING.IDZ", inbox, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := nc.PublishRequest("$SYS.REQ.SERVER.PING.VARZ", inbox, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	// IDZ takes no options (as nats-server): six IDZ answers, and one VARZ.
	ids, varz := 0, 0
	for i := 0; i < 7; i++ {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if strings.Contains(string(m.Data), `"data"`) {
			varz++
		} else {
			ids++
		}
	}
	// The matching VARZ was the last request, so its answer came last:
	// any answer to a filtered-out request would have been among the seven.
	if ids != 6 || varz != 1 {
		t.Errorf("got %d IDZ and %d VARZ answers, want 6 and 1", ids, varz)
	}
}

// TestClusterPing: with three routed servers, one PING from a client of
// any server is answered by all three, and a request by id reaches the
// named server through the routes.
func TestClusterPing(t *testing.T) {
	servers := startCluster(t)
	for _, entry := range servers {
		nc := connectSys(t, entry)
		names := pingNames(t, nc, "$SYS.REQ.SERVER.PING", 3)
		if strings.Join(names, ",") != "s0,s1,s2" {
			t.Errorf("PING from %s answered by %v", entry.Name(), names)
		}
		for _, target := range servers {
			var v envelope[monitor.Varz]
			request(t, nc, "$SYS.REQ.SERVER."+target.ID()+".VARZ", "", &v)
			if v.Data == nil || v.Data.Name != target.Name() || v.Server.Cluster != "C" {
				t.Errorf("VARZ of %s from %s: %+v", target.Name(), entry.Name(), v.Server)
			}
		}
	}
	var sm StatsMsg
	request(t, connectSys(t, servers[1]), "$SYS.REQ.SERVER."+servers[2].ID()+".STATSZ", "", &sm)
	if len(sm.Stats.Routes) != 2 || sm.Stats.ActiveServers != 3 {
		t.Errorf("statsz of s2: %d routes, %d active servers", len(sm.Stats.Routes), sm.Stats.ActiveServers)
	}
}

// pingNames sends a request and collects the names in want answers.
func pingNames(t *testing.T, nc *nats.Conn, subj string, want int) []string {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subj, inbox, nil); err != nil {
		t.Fatal(err)
	}
	var names []string
	for len(names) < want {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: %d answers of %d: %v", subj, len(names), want, err)
		}
		var sm StatsMsg
		if err := json.Unmarshal(m.Data, &sm); err != nil {
			t.Fatal(err)
		}
		names = append(names, sm.Server.Name)
	}
	sort.Strings(names)
	return names
}
