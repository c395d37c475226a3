package monitor

import (
	"fmt"
	"net/http"
	"time"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
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

// JSInfo is /jsz (server level; no account or stream details).
type JSInfo struct {
	Memory    uint64            `json:"memory"`
	Store     uint64            `json:"storage"`
	Accounts  int               `json:"accounts"`
	API       JetStreamAPIStats `json:"api"`
	ID        string            `json:"server_id"`
	Now       time.Time         `json:"now"`
	Disabled  bool              `json:"disabled,omitempty"`
	Config    *JetStreamConfig  `json:"config,omitempty"`
	Streams   int               `json:"streams"`
	Consumers int               `json:"consumers"`
	Messages  uint64            `json:"messages"`
	Bytes     uint64            `json:"bytes"`
	Meta      *MetaClusterInfo  `json:"meta_cluster,omitempty"`
}

// MetaClusterInfo is /jsz's meta_cluster: clustered JetStream's meta
// group, in nats-server's field names.
type MetaClusterInfo struct {
	Name     string          `json:"name,omitempty"`
	Leader   string          `json:"leader,omitempty"`
	Peer     string          `json:"peer,omitempty"`
	Replicas []*api.PeerInfo `json:"replicas,omitempty"`
	Size     int             `json:"cluster_size"`
	Pending  int             `json:"pending"`
}

func (m *Monitor) jsz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, m.Jsz())
}

// Jsz returns the /jsz document.
func (m *Monitor) Jsz() *JSInfo {
	info := &JSInfo{ID: m.opts.Server.ID(), Now: time.Now().UTC()}
	if js := m.opts.JetStream; js == nil {
		info.Disabled = true
	} else {
		s := js.Stats()
		cfg := jsConfig(s)
		st := jsStats(s)
		info.Memory, info.Store, info.Accounts, info.API = st.Memory, st.Store, st.Accounts, st.API
		info.Config = &cfg
		info.Streams, info.Consumers, info.Messages, info.Bytes = s.Streams, s.Consumers, s.Messages, s.Bytes
		if mc := s.Meta; mc != nil {
			info.Meta = &MetaClusterInfo{Name: mc.Cluster, Leader: mc.Leader, Replicas: mc.Replicas, Size: mc.Size}
		}
	}
	return info
}

func jsConfig(s jetstream.Stats) JetStreamConfig {
	// nats-server reports the limits in force; jetwal's "no limit" is -1
	// there as in $JS.API.INFO.
	c := JetStreamConfig{MaxMemory: -1, MaxStore: -1, StoreDir: s.StoreDir, SyncInterval: s.SyncInterval, SyncAlways: s.SyncAlways}
	if s.MaxMemory > 0 {
		c.MaxMemory = s.MaxMemory
	}
	if s.MaxStore > 0 {
		c.MaxStore = s.MaxStore
	}
	return c
}

func jsStats(s jetstream.Stats) JetStreamStats {
	// Everything lives in the global account, which has JetStream.
	return JetStreamStats{Memory: s.Memory, Store: s.Store, Accounts: 1,
		API: JetStreamAPIStats{Level: s.APILevel, Total: s.APITotal, Errors: s.APIErrors}}
}

// HealthStatus is /healthz.
type HealthStatus struct {
	Status     string `json:"status"`
	StatusCode int    `json:"status_code,omitempty"`
	Error      string `json:"error,omitempty"`
}

func (m *Monitor) healthz(w http.ResponseWriter, r *http.Request) {
	for _, p := range []string{"js-enabled-only", "js-server-only", "js-enabled"} {
		if _, err := queryBool(r, p); err != nil {
			writeJSON(w, http.StatusBadRequest, &HealthStatus{Status: "error", Error: err.Error()})
			return
		}
	}
	h := m.Healthz()
	status := h.StatusCode
	// As nats-server, the HTTP answer carries the code as its status only.
	h.StatusCode = 0
	writeJSON(w, status, h)
}

// Healthz returns the /healthz document with its StatusCode: 200 when
// healthy, 503 when not (as nats-server's answer over NATS).
func (m *Monitor) Healthz() *HealthStatus {
	// jetwal's JetStream either started with the server or the server did
	// not start, and there is no cluster or asset recovery to wait for. It
	// is unhealthy when streams or consumers failed to load: an empty or
	// partial server must never look healthy.
	if m.opts.JetStream != nil {
		if errs := m.opts.JetStream.Stats().LoadErrors; len(errs) > 0 {
			return &HealthStatus{Status: "unavailable", StatusCode: http.StatusServiceUnavailable,
				Error: fmt.Sprintf("JetStream: %d streams or consumers failed to load; first: %s", len(errs), errs[0])}
		}
	}
	return &HealthStatus{Status: "ok", StatusCode: http.StatusOK}
}
