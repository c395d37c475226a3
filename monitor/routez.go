package monitor

import (
	"net/http"
	"time"
)

// Routez is /routez: the server's routes to the other servers of its
// cluster, in nats-server's field names. ?subs=1 lists each route's remote
// interest.
type Routez struct {
	ID        string      `json:"server_id"`
	Name      string      `json:"server_name"`
	Now       time.Time   `json:"now"`
	NumRoutes int         `json:"num_routes"`
	Routes    []RouteInfo `json:"routes"`
}

// RouteInfo is one route in /routez.
type RouteInfo struct {
	RID          uint64    `json:"rid"`
	RemoteID     string    `json:"remote_id"`
	RemoteName   string    `json:"remote_name"`
	DidSolicit   bool      `json:"did_solicit"`
	IsConfigured bool      `json:"is_configured"`
	IP           string    `json:"ip"`
	Port         int       `json:"port"`
	Start        time.Time `json:"start"`
	LastActivity time.Time `json:"last_activity"`
	Uptime       string    `json:"uptime"`
	Idle         string    `json:"idle"`
	Pending      int       `json:"pending_size"`
	InMsgs       int64     `json:"in_msgs"`
	OutMsgs      int64     `json:"out_msgs"`
	InBytes      int64     `json:"in_bytes"`
	OutBytes     int64     `json:"out_bytes"`
	NumSubs      int       `json:"subscriptions"`
	Subs         []string  `json:"subscriptions_list,omitempty"`
}

func (m *Monitor) routez(w http.ResponseWriter, r *http.Request) {
	subs := r.URL.Query().Get("subs")
	writeJSON(w, http.StatusOK, m.Routez(subs == "1" || subs == "true" || subs == "detail"))
}

// Routez returns the /routez document, with each route's remote interest
// when withSubs.
func (m *Monitor) Routez(withSubs bool) *Routez {
	now := time.Now().UTC()
	routes := m.opts.Server.Routes()
	out := &Routez{ID: m.opts.Server.ID(), Name: m.opts.Server.Name(), Now: now, NumRoutes: len(routes), Routes: []RouteInfo{}}
	for _, ri := range routes {
		e := RouteInfo{
			RID: ri.RID, RemoteID: ri.RemoteID, RemoteName: ri.RemoteName, DidSolicit: ri.DidSolicit,
			IsConfigured: ri.IsConfigured, IP: ri.IP, Port: ri.Port, Start: ri.Start.UTC(), LastActivity: ri.LastActivity.UTC(),
			Uptime: uptime(now.Sub(ri.Start)), Idle: uptime(now.Sub(ri.LastActivity)),
			Pending: ri.Pending, InMsgs: ri.InMsgs, OutMsgs: ri.OutMsgs, InBytes: ri.InBytes, OutBytes: ri.OutBytes,
			NumSubs: len(ri.Subs),
		}
		if withSubs {
			e.Subs = ri.Subs
		}
		out.Routes = append(out.Routes, e)
	}
	return out
}
