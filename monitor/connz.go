package monitor

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/jetwal/jetwal/server"
)

// GlobalAccount is the name of jetwal's single account, as nats-server
// names its default account.
const GlobalAccount = "$G"

// DefaultConnListSize is nats-server's default /connz limit.
const DefaultConnListSize = 1024

// Connz is /connz.
type Connz struct {
	ID       string      `json:"server_id"`
	Now      time.Time   `json:"now"`
	NumConns int         `json:"num_connections"`
	Total    int         `json:"total"`
	Offset   int         `json:"offset"`
	Limit    int         `json:"limit"`
	Conns    []*ConnInfo `json:"connections"`
}

// ConnInfo is one connection in /connz.
type ConnInfo struct {
	Cid            uint64    `json:"cid"`
	Kind           string    `json:"kind,omitempty"`
	Type           string    `json:"type,omitempty"`
	IP             string    `json:"ip"`
	Port           int       `json:"port"`
	Start          time.Time `json:"start"`
	LastActivity   time.Time `json:"last_activity"`
	Uptime         string    `json:"uptime"`
	Idle           string    `json:"idle"`
	Pending        int       `json:"pending_bytes"`
	InMsgs         int64     `json:"in_msgs"`
	OutMsgs        int64     `json:"out_msgs"`
	InBytes        int64     `json:"in_bytes"`
	OutBytes       int64     `json:"out_bytes"`
	NumSubs        uint32    `json:"subscriptions"`
	Name           string    `json:"name,omitempty"`
	Lang           string    `json:"lang,omitempty"`
	Version        string    `json:"version,omitempty"`
	TLSVersion     string    `json:"tls_version,omitempty"`
	TLSCipher      string    `json:"tls_cipher_suite,omitempty"`
	AuthorizedUser string    `json:"authorized_user,omitempty"`
	Account        string    `json:"account,omitempty"`
}

// connSorts are the supported ?sort= values, as in nats-server; each sorts
// descending except cid and start.
var connSorts = map[string]func(a, b *server.ConnInfo) bool{
	"cid":        func(a, b *server.ConnInfo) bool { return a.CID < b.CID },
	"start":      func(a, b *server.ConnInfo) bool { return a.Start.Before(b.Start) },
	"subs":       func(a, b *server.ConnInfo) bool { return a.Subscriptions > b.Subscriptions },
	"pending":    func(a, b *server.ConnInfo) bool { return a.Pending > b.Pending },
	"msgs_to":    func(a, b *server.ConnInfo) bool { return a.OutMsgs > b.OutMsgs },
	"msgs_from":  func(a, b *server.ConnInfo) bool { return a.InMsgs > b.InMsgs },
	"bytes_to":   func(a, b *server.ConnInfo) bool { return a.OutBytes > b.OutBytes },
	"bytes_from": func(a, b *server.ConnInfo) bool { return a.InBytes > b.InBytes },
	"last":       func(a, b *server.ConnInfo) bool { return a.LastActivity.After(b.LastActivity) },
	"idle":       func(a, b *server.ConnInfo) bool { return a.LastActivity.Before(b.LastActivity) },
	"uptime":     func(a, b *server.ConnInfo) bool { return a.Start.Before(b.Start) },
}

// ConnzOptions are the /connz query parameters (and the options of a
// $SYS.REQ.SERVER.*.CONNZ request, in nats-server's JSON names).
type ConnzOptions struct {
	Sort     string `json:"sort"`   // "" = cid
	Username bool   `json:"auth"`   // show each connection's user
	Offset   int    `json:"offset"` // first connection listed
	Limit    int    `json:"limit"`  // <= 0 = DefaultConnListSize, as nats-server
	CID      uint64 `json:"cid"`    // only this connection (0 = all)
	Account  string `json:"acc"`    // only this account's connections ("" = all)
}

func (m *Monitor) connz(w http.ResponseWriter, r *http.Request) {
	var o ConnzOptions
	var err error
	// As nats-server's /connz: offset and limit are any integers (a
	// negative offset is 0, a limit <= 0 the default), cid an unsigned one.
	if o.Offset, err = queryAnyInt(r, "offset"); err != nil {
		badRequest(w, "%v", err)
		return
	}
	if o.Limit, err = queryAnyInt(r, "limit"); err != nil {
		badRequest(w, "%v", err)
		return
	}
	if s := r.URL.Query().Get("cid"); s != "" {
		if o.CID, err = strconv.ParseUint(s, 10, 64); err != nil {
			// nats-server's words.
			badRequest(w, "Error decoding uint64 for 'cid': %v", err)
			return
		}
	}
	if o.Username, err = queryBool(r, "auth"); err != nil {
		badRequest(w, "%v", err)
		return
	}
	o.Sort = r.URL.Query().Get("sort")
	o.Account = r.URL.Query().Get("acc")
	c, err := m.Connz(o)
	if err != nil {
		badRequest(w, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// Connz returns the /connz document.
func (m *Monitor) Connz(o ConnzOptions) (*Connz, error) {
	offset, limit, showUser, sortBy := max(o.Offset, 0), o.Limit, o.Username, o.Sort
	if limit <= 0 {
		limit = DefaultConnListSize
	}
	if o.CID > 0 {
		limit = 1 // as nats-server: one connection at most
	}
	if sortBy == "" {
		sortBy = "cid"
	}
	less, ok := connSorts[sortBy]
	if !ok {
		return nil, fmt.Errorf("invalid sorting option %q", sortBy)
	}
	accs := m.accounts()
	conns := m.opts.Server.Connections()
	if o.Account != "" {
		kept := conns[:0]
		for i := range conns {
			if accs.ConnAccount(&conns[i]) == o.Account {
				kept = append(kept, conns[i])
			}
		}
		conns = kept
	}
	sort.SliceStable(conns, func(i, j int) bool { return less(&conns[i], &conns[j]) })
	now := time.Now()
	c := &Connz{ID: m.opts.Server.ID(), Now: now.UTC(), Total: len(conns), Offset: offset, Limit: limit, Conns: []*ConnInfo{}}
	if o.CID > 0 {
		// The total stays that of the (account's) connections, as
		// nats-server's; unlike nats-server, a cid of another account is not
		// shown to an account-scoped request.
		var one []server.ConnInfo
		for i := range conns {
			if conns[i].CID == o.CID {
				one = append(one, conns[i])
				break
			}
		}
		conns = one
	}
	if offset < len(conns) {
		conns = conns[offset:]
	} else {
		conns = nil
	}
	if len(conns) > limit {
		conns = conns[:limit]
	}
	for i := range conns {
		ci := &conns[i]
		out := &ConnInfo{
			Cid: ci.CID, Kind: "Client", Type: connType(ci), IP: ci.IP, Port: ci.Port,
			Start: ci.Start.UTC(), LastActivity: ci.LastActivity.UTC(),
			Uptime: uptime(now.Sub(ci.Start)), Idle: uptime(now.Sub(ci.LastActivity)),
			Pending: ci.Pending, InMsgs: ci.InMsgs, OutMsgs: ci.OutMsgs, InBytes: ci.InBytes, OutBytes: ci.OutBytes,
			NumSubs: uint32(ci.Subscriptions), Name: ci.Name, Lang: ci.Lang, Version: ci.Version,
			TLSVersion: ci.TLSVersion, TLSCipher: ci.TLSCipher, Account: accs.ConnAccount(ci),
		}
		if showUser {
			out.AuthorizedUser = ci.AuthorizedUser
		}
		c.Conns = append(c.Conns, out)
	}
	c.NumConns = len(c.Conns)
	return c, nil
}

// connType is nats-server's connection type name: "nats", or "websocket"
// for a client of the WebSocket listener.
func connType(ci *server.ConnInfo) string {
	if ci.Websocket {
		return "websocket"
	}
	return "nats"
}
