package monitor

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/jetwal/jetwal/jetstream"
)

// Accountz is /accountz: the accounts, or one account's detail with
// ?acc=NAME, in nats-server's field names.
type Accountz struct {
	ID            string       `json:"server_id"`
	Now           time.Time    `json:"now"`
	SystemAccount string       `json:"system_account,omitempty"`
	Accounts      []string     `json:"accounts,omitempty"`
	Account       *AccountInfo `json:"account_detail,omitempty"`
}

// AccountInfo is one account's detail. jetwal accounts have no JWTs,
// imports, exports or mappings, so those fields are never present.
type AccountInfo struct {
	AccountName string       `json:"account_name"`
	LastUpdate  time.Time    `json:"update_time,omitempty"`
	IsSystem    bool         `json:"is_system,omitempty"`
	Expired     bool         `json:"expired"`
	Complete    bool         `json:"complete"`
	JetStream   bool         `json:"jetstream_enabled"`
	LeafCnt     int          `json:"leafnode_connections"`
	ClientCnt   int          `json:"client_connections"`
	SubCnt      uint32       `json:"subscriptions"`
	NameTag     string       `json:"name_tag,omitempty"`
	Sublist     *SublistStat `json:"sublist_stats,omitempty"`
}

// SublistStat is the sublist_stats of an account; jetwal counts the
// subscriptions and the subject cache only.
type SublistStat struct {
	NumSubs  uint32 `json:"num_subscriptions"`
	NumCache uint32 `json:"num_cache"`
}

// AccountzOptions are the options of /accountz and of an ACCOUNTZ request.
type AccountzOptions struct {
	Account string `json:"account"`
}

func (m *Monitor) accountz(w http.ResponseWriter, r *http.Request) {
	a, err := m.Accountz(AccountzOptions{Account: r.URL.Query().Get("acc")})
	if err != nil {
		badRequest(w, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// Accountz returns the /accountz document.
func (m *Monitor) Accountz(o AccountzOptions) (*Accountz, error) {
	src := m.accounts()
	a := &Accountz{ID: m.opts.Server.ID(), Now: time.Now().UTC(), SystemAccount: src.SystemAccount()}
	if o.Account == "" {
		a.Accounts = append([]string{}, src.Accounts()...)
		return a, nil
	}
	info, err := m.AccountInfo(o.Account)
	if err != nil {
		return nil, err
	}
	a.Account = info
	return a, nil
}

// AccountInfo returns one account's detail (/accountz?acc= and
// $SYS.REQ.ACCOUNT.<account>.INFO).
func (m *Monitor) AccountInfo(name string) (*AccountInfo, error) {
	src := m.accounts()
	if !m.hasAccount(name) {
		return nil, fmt.Errorf("Account %s does not exist", name)
	}
	info := &AccountInfo{
		AccountName: name, LastUpdate: m.start().UTC(), IsSystem: name == src.SystemAccount(), Complete: true,
		NameTag: name,
	}
	if js := m.opts.JetStream; js != nil {
		for _, d := range js.AccountDetails(jetstream.DetailOptions{}) {
			info.JetStream = info.JetStream || d.Account == name
		}
	}
	st := m.accountStat(name)
	info.ClientCnt, info.SubCnt = st.Conns, st.NumSubs
	info.Sublist = &SublistStat{NumSubs: st.NumSubs}
	if len(src.Accounts()) == 1 {
		// One account holds every subscription and the whole cache.
		ss := m.opts.Server.Stats()
		info.SubCnt = uint32(ss.Subscriptions)
		info.Sublist = &SublistStat{NumSubs: uint32(ss.Subscriptions), NumCache: uint32(ss.SubjectCache)}
	}
	return info, nil
}

// AccountStatz is nats-server's AccountStatz: per-account connection and
// message counts (the answer to $SYS.REQ.ACCOUNT.PING.STATZ and
// $SYS.REQ.ACCOUNT.<account>.STATZ).
type AccountStatz struct {
	ID       string         `json:"server_id"`
	Now      time.Time      `json:"now"`
	Accounts []*AccountStat `json:"account_statz"`
}

// AccountStat is one account's figures. jetwal counts the messages of the
// connections open now; nats-server's also include closed ones.
type AccountStat struct {
	Account       string    `json:"acc"`
	Name          string    `json:"name"`
	Conns         int       `json:"conns"`
	LeafNodes     int       `json:"leafnodes"`
	TotalConns    int       `json:"total_conns"`
	NumSubs       uint32    `json:"num_subscriptions"`
	Sent          DataStats `json:"sent"`
	Received      DataStats `json:"received"`
	SlowConsumers int64     `json:"slow_consumers"`
}

// DataStats counts messages and bytes.
type DataStats struct {
	Msgs  int64 `json:"msgs"`
	Bytes int64 `json:"bytes"`
}

// AccountStatzOptions select the accounts of an AccountStatz; without
// IncludeUnused accounts with no connection are left out.
type AccountStatzOptions struct {
	Accounts      []string `json:"accounts"`
	IncludeUnused bool     `json:"include_unused"`
}

// AccountStatz returns the statistics of the accounts o names (all when
// none).
func (m *Monitor) AccountStatz(o AccountStatzOptions) *AccountStatz {
	out := &AccountStatz{ID: m.opts.Server.ID(), Now: time.Now().UTC(), Accounts: []*AccountStat{}}
	names := o.Accounts
	if len(names) == 0 {
		names = m.accounts().Accounts()
	}
	for _, n := range names {
		if !m.hasAccount(n) {
			continue
		}
		if st := m.accountStat(n); o.IncludeUnused || st.Conns > 0 {
			out.Accounts = append(out.Accounts, st)
		}
	}
	sort.Slice(out.Accounts, func(i, j int) bool { return out.Accounts[i].Account < out.Accounts[j].Account })
	return out
}

// accountStat sums the open connections of one account. Sent is what the
// server sent to them, Received what they published.
func (m *Monitor) accountStat(name string) *AccountStat {
	src := m.accounts()
	st := &AccountStat{Account: name, Name: name}
	for _, ci := range m.opts.Server.Connections() {
		if src.ConnAccount(&ci) != name {
			continue
		}
		st.Conns++
		st.NumSubs += uint32(ci.Subscriptions)
		st.Sent.Msgs += ci.OutMsgs
		st.Sent.Bytes += ci.OutBytes
		st.Received.Msgs += ci.InMsgs
		st.Received.Bytes += ci.InBytes
	}
	st.TotalConns = st.Conns
	return st
}

// start is when the server started (an account's update time: jetwal's
// accounts change only with the configuration).
func (m *Monitor) start() time.Time {
	if !m.opts.ConfigLoadTime.IsZero() {
		return m.opts.ConfigLoadTime
	}
	return m.opts.Server.Stats().Start
}
