package sysreq

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// serverWide are requests nats-server serves in the system account only.
func serverWide(servers ...*server.Server) []string {
	subjs := []string{
		"$SYS.REQ.SERVER.PING", "$SYS.REQ.SERVER.PING.STATSZ", "$SYS.REQ.SERVER.PING.VARZ",
		"$SYS.REQ.SERVER.PING.JSZ", "$SYS.REQ.SERVER.PING.HEALTHZ", "$SYS.REQ.SERVER.PING.SUBSZ",
		"$SYS.REQ.SERVER.PING.ACCOUNTZ", "$SYS.REQ.SERVER.PING.IDZ",
		"$SYS.REQ.ACCOUNT.$G.CONNZ", "$SYS.REQ.ACCOUNT.A.JSZ", "$SYS.REQ.ACCOUNT.SYS.INFO", "$SYS.REQ.ACCOUNT.$G.STATZ",
	}
	for _, s := range servers {
		subjs = append(subjs, "$SYS.REQ.SERVER."+s.ID()+".VARZ", "$SYS.REQ.SERVER."+s.ID()+".CONNZ")
	}
	return subjs
}

// TestUserAccountsScope: clients of $G and of account A get no responders
// for the server requests, and never see the $SYS.SERVER and $SYS.ACCOUNT
// events; the pings nats-server imports into every account answer, from
// both servers, with the asker's own account only; the system account's
// user gets everything.
func TestUserAccountsScope(t *testing.T) {
	s0 := startAccountsNode(t, "s0", clusterOpts(t))
	s1 := startAccountsNode(t, "s1", clusterOpts(t, "nats://"+s0.ClusterAddr().String()))
	waitFor(t, "route", func() bool { return len(s0.Routes()) == 1 && len(s1.Routes()) == 1 })
	admin := connect(t, s0, nats.UserInfo("admin", "pw"), nats.Name("admin"))
	connect(t, s0, nats.UserInfo("b", "pw"), nats.Name("b0"))
	b1 := connect(t, s1, nats.UserInfo("b", "pw"), nats.Name("b1"))
	g1 := connect(t, s1, nats.UserInfo("g", "pw"), nats.Name("g1"))
	waitFor(t, "both servers answer PING in SYS", func() bool { return answers(t, admin, "$SYS.REQ.SERVER.PING") == 2 })
	for _, nc := range []*nats.Conn{b1, g1} {
		waitFor(t, "both servers answer CONNZ pings in "+nc.Opts.User+"'s account", func() bool {
			return answers(t, nc, "$SYS.REQ.SERVER.PING.CONNZ") == 2 && answers(t, nc, "$SYS.REQ.ACCOUNT.PING.CONNZ") == 2
		})
	}

	// Event watchers in the user accounts, and one in SYS.
	var watches []*nats.Subscription
	for _, nc := range []*nats.Conn{b1, g1} {
		for _, subj := range []string{"$SYS.SERVER.>", "$SYS.ACCOUNT.>"} {
			sub, err := nc.SubscribeSync(subj)
			if err != nil {
				t.Fatal(err)
			}
			watches = append(watches, sub)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	events, err := admin.SubscribeSync("$SYS.ACCOUNT.*.DISCONNECT")
	if err != nil {
		t.Fatal(err)
	}
	statsz, err := admin.SubscribeSync("$SYS.SERVER.*.STATSZ")
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Flush(); err != nil {
		t.Fatal(err)
	}

	for _, nc := range []*nats.Conn{b1, g1} {
		for _, subj := range serverWide(s0, s1) {
			if m, err := nc.Request(subj, nil, 2*time.Second); err != nats.ErrNoResponders {
				t.Errorf("%s from %s: %v %s, want no responders", subj, nc.Opts.User, err, msgData(m))
			}
		}
	}
	// The system user gets an answer to every one.
	for _, subj := range serverWide(s0, s1) {
		if _, err := admin.Request(subj, nil, 10*time.Second); err != nil {
			t.Errorf("%s from the system user: %v", subj, err)
		}
	}

	// The imported pings: the connections of the asker's account, from
	// both servers; STATZ from the servers where it has clients.
	for _, subj := range []string{"$SYS.REQ.SERVER.PING.CONNZ", "$SYS.REQ.ACCOUNT.PING.CONNZ"} {
		if got := connNames(t, b1, subj, 2); got != "b0,b1" {
			t.Errorf("%s from A: connections %s, want b0,b1", subj, got)
		}
		if got := connNames(t, g1, subj, 2); got != "g1" {
			t.Errorf("%s from $G: connections %s, want g1", subj, got)
		}
	}
	var st envelope[monitor.AccountStatz]
	request(t, g1, "$SYS.REQ.ACCOUNT.PING.STATZ", "", &st)
	if st.Data == nil || len(st.Data.Accounts) != 1 || st.Data.Accounts[0].Account != "$G" || st.Data.Accounts[0].Conns != 1 || st.Server.Name != "s1" {
		t.Errorf("account ping STATZ from $G: %+v", st)
	}

	// A client comes and goes: the system user sees its DISCONNECT, and
	// a statsz broadcast; the user accounts' watchers see nothing.
	connect(t, s1, nats.UserInfo("b", "pw"), nats.Name("brief")).Close()
	for {
		var de DisconnectEvent
		nextEvent(t, events, &de)
		if de.Client.Name == "brief" {
			if de.Client.Account != "A" {
				t.Errorf("disconnect event %+v", de.Client)
			}
			break
		}
	}
	if _, err := statsz.NextMsg(20 * time.Second); err != nil {
		t.Errorf("no statsz broadcast for the system user: %v", err)
	}
	for _, nc := range []*nats.Conn{b1, g1} {
		if err := nc.Flush(); err != nil { // anything sent before is in
			t.Fatal(err)
		}
	}
	for _, sub := range watches {
		if m, err := sub.NextMsg(100 * time.Millisecond); err == nil {
			t.Errorf("a client of a user account got %s on %s", m.Subject, sub.Subject)
		}
	}
}

// connNames sends subj from nc, waits for answers answers, and returns the
// names of the connections they list, sorted and joined.
func connNames(t *testing.T, nc *nats.Conn, subj string, answers int) string {
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
	for range answers {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: %v", subj, err)
		}
		var c envelope[monitor.Connz]
		if err := json.Unmarshal(m.Data, &c); err != nil || c.Data == nil {
			t.Fatalf("%s: %s", subj, m.Data)
		}
		for _, ci := range c.Data.Conns {
			names = append(names, ci.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}
