package monitor

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/server"
)

// twoAccounts is an AccountSource with a system account SYS whose
// connections are those named "sys-*".
type twoAccounts struct{}

func (twoAccounts) Accounts() []string    { return []string{"SYS", GlobalAccount} }
func (twoAccounts) SystemAccount() string { return "SYS" }
func (twoAccounts) ConnAccount(ci *server.ConnInfo) string {
	if strings.HasPrefix(ci.Name, "sys-") {
		return "SYS"
	}
	return GlobalAccount
}

// TestAccountz: the accounts come from the AccountSource; one account's
// detail counts its connections and says whether it has JetStream.
func TestAccountz(t *testing.T) {
	f := startWith(t, true, twoAccounts{})
	app := f.connect(t, "app-1")
	if _, err := app.SubscribeSync("a.>"); err != nil {
		t.Fatal(err)
	}
	app.Flush()
	f.connect(t, "sys-1").Flush()

	a := f.get(t, "/accountz", http.StatusOK)
	if a["system_account"] != "SYS" || !reflect.DeepEqual(a["accounts"], []any{"SYS", "$G"}) || a["server_id"] != f.srv.ID() {
		t.Errorf("accountz %v", a)
	}
	want := []string{"account_name", "update_time", "expired", "complete", "jetstream_enabled", "leafnode_connections",
		"client_connections", "subscriptions", "name_tag", "sublist_stats"}
	raw := f.raw(t, "/accountz?acc=$G", http.StatusOK)
	if got := keysOf(t, raw, "account_detail"); !reflect.DeepEqual(got, want) {
		t.Errorf("account_detail keys\n got %v\nwant %v", got, want)
	}
	g := f.get(t, "/accountz?acc=$G", http.StatusOK)["account_detail"].(map[string]any)
	if g["account_name"] != "$G" || g["jetstream_enabled"] != true || g["client_connections"] != 1.0 || g["subscriptions"] != 1.0 ||
		g["complete"] != true || g["expired"] != false {
		t.Errorf("$G detail %v", g)
	}
	if _, ok := g["is_system"]; ok {
		t.Errorf("$G is not the system account: %v", g)
	}
	s := f.get(t, "/accountz?acc=SYS", http.StatusOK)["account_detail"].(map[string]any)
	if s["is_system"] != true || s["jetstream_enabled"] != false || s["client_connections"] != 1.0 {
		t.Errorf("SYS detail %v", s)
	}
	if body := f.raw(t, "/accountz?acc=NOPE", http.StatusBadRequest); !strings.Contains(string(body), "Account NOPE does not exist") {
		t.Errorf("unknown account: %s", body)
	}

	// /connz shows each connection's account and filters by it.
	c := f.get(t, "/connz?acc=SYS", http.StatusOK)
	conns := c["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["name"] != "sys-1" || conns[0].(map[string]any)["account"] != "SYS" {
		t.Errorf("connz?acc=SYS %v", c)
	}

	// Account statistics: accounts without connections are left out unless
	// asked for.
	st := f.mon.AccountStatz(AccountStatzOptions{})
	if len(st.Accounts) != 2 || st.Accounts[0].Account != "$G" || st.Accounts[0].Conns != 1 || st.Accounts[0].NumSubs != 1 {
		t.Errorf("AccountStatz %+v", st.Accounts)
	}
	if st = f.mon.AccountStatz(AccountStatzOptions{Accounts: []string{"NOPE", "SYS"}}); len(st.Accounts) != 1 || st.Accounts[0].Account != "SYS" {
		t.Errorf("AccountStatz of SYS %+v", st.Accounts)
	}
	app.Close()
	waitUntil(t, "app-1 gone", func() bool { return len(f.mon.AccountStatz(AccountStatzOptions{}).Accounts) == 1 })
	if st = f.mon.AccountStatz(AccountStatzOptions{IncludeUnused: true}); len(st.Accounts) != 2 {
		t.Errorf("AccountStatz with unused %+v", st.Accounts)
	}
}

// TestAccountzDefault: without an AccountSource the server has $G only.
func TestAccountzDefault(t *testing.T) {
	f := start(t, false)
	a := f.get(t, "/accountz", http.StatusOK)
	if _, ok := a["system_account"]; ok || !reflect.DeepEqual(a["accounts"], []any{"$G"}) {
		t.Errorf("accountz %v", a)
	}
	if g := f.get(t, "/accountz?acc=$G", http.StatusOK)["account_detail"].(map[string]any); g["jetstream_enabled"] != false {
		t.Errorf("$G without JetStream %v", g)
	}
}

// waitUntil polls cond until it holds, failing after a generous deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
