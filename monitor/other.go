package monitor

import (
	"net/http"
	"time"
)

// Subsz is /subsz: the subscription count and the size of the subject
// cache. nats-server's match and fanout statistics are not tracked.
type Subsz struct {
	ID       string    `json:"server_id"`
	Now      time.Time `json:"now"`
	NumSubs  uint32    `json:"num_subscriptions"`
	NumCache uint32    `json:"num_cache"`
}

func (m *Monitor) subsz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, m.Subsz())
}

// Subsz returns the /subsz document.
func (m *Monitor) Subsz() *Subsz {
	st := m.opts.Server.Stats()
	return &Subsz{
		ID: m.opts.Server.ID(), Now: time.Now().UTC(),
		NumSubs: uint32(st.Subscriptions), NumCache: uint32(st.SubjectCache),
	}
}
