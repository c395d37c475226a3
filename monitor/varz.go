package monitor

import (
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream"
)

// Varz is /varz, in nats-server's field names and order. Only fields jetwal
// knows are present.
type Varz struct {
	ID               string            `json:"server_id"`
	Name             string            `json:"server_name"`
	Version          string            `json:"version"`
	Proto            int               `json:"proto"`
	GoVersion        string            `json:"go"`
	Host             string            `json:"host"`
	Port             int               `json:"port"`
	AuthRequired     bool              `json:"auth_required,omitempty"`
	TLSRequired      bool              `json:"tls_required,omitempty"`
	TLSVerify        bool              `json:"tls_verify,omitempty"`
	MaxConn          int               `json:"max_connections"`
	PingInterval     time.Duration     `json:"ping_interval"`
	MaxPingsOut      int               `json:"ping_max"`
	HTTPHost         string            `json:"http_host"`
	HTTPPort         int               `json:"http_port"`
	AuthTimeout      float64           `json:"auth_timeout"`
	MaxControlLine   int32             `json:"max_control_line"`
	MaxPayload       int               `json:"max_payload"`
	MaxPending       int64             `json:"max_pending"`
	Tags             []string          `json:"tags,omitempty"`
	JetStream        *JetStreamVarz    `json:"jetstream,omitempty"`
	Websocket        *WebsocketVarz    `json:"websocket,omitempty"`
	TLSTimeout       float64           `json:"tls_timeout"`
	WriteDeadline    time.Duration     `json:"write_deadline"`
	Start            time.Time         `json:"start"`
	Now              time.Time         `json:"now"`
	Uptime           string            `json:"uptime"`
	Mem              int64             `json:"mem,omitempty"`
	Cores            int               `json:"cores"`
	MaxProcs         int               `json:"gomaxprocs"`
	CPU              float64           `json:"cpu"`
	Connections      int               `json:"connections"`
	TotalConnections uint64            `json:"total_connections"`
	InMsgs           int64             `json:"in_msgs"`
	InBytes          int64             `json:"in_bytes"`
	InClientMsgs     int64             `json:"in_client_msgs"`
	InClientBytes    int64             `json:"in_client_bytes"`
	OutMsgs          int64             `json:"out_msgs"`
	OutBytes         int64             `json:"out_bytes"`
	OutClientMsgs    int64             `json:"out_client_msgs"`
	OutClientBytes   int64             `json:"out_client_bytes"`
	SlowConsumers    int64             `json:"slow_consumers"`
	StaleConnections int64             `json:"stale_connections"`
	Subscriptions    uint32            `json:"subscriptions"`
	HTTPReqStats     map[string]uint64 `json:"http_req_stats"`
	ConfigLoadTime   time.Time         `json:"config_load_time"`
}

// WebsocketVarz is the websocket part of /varz (nats-server's
// WebsocketOptsVarz, the fields jetwal has), present with a websocket
// listener.
type WebsocketVarz struct {
	Host             string        `json:"host,omitempty"`
	Port             int           `json:"port,omitempty"`
	HandshakeTimeout time.Duration `json:"handshake_timeout,omitempty"`
	NoTLS            bool          `json:"no_tls,omitempty"`
	SameOrigin       bool          `json:"same_origin,omitempty"`
	AllowedOrigins   []string      `json:"allowed_origins,omitempty"`
	Compression      bool          `json:"compression,omitempty"`
}

// JetStreamVarz is the jetstream part of /varz.
type JetStreamVarz struct {
	Config JetStreamConfig `json:"config"`
	Stats  JetStreamStats  `json:"stats"`
}

// JetStreamConfig is nats-server's JetStreamConfig: the limits and store.
type JetStreamConfig struct {
	MaxMemory    int64         `json:"max_memory"`
	MaxStore     int64         `json:"max_storage"`
	StoreDir     string        `json:"store_dir,omitempty"`
	SyncInterval time.Duration `json:"sync_interval,omitempty"`
	SyncAlways   bool          `json:"sync_always,omitempty"`
	Domain       string        `json:"domain,omitempty"`
}

// JetStreamStats is nats-server's JetStreamStats. jetwal reserves no
// storage for accounts and has no raft groups outside clustered mode.
type JetStreamStats struct {
	Memory         uint64            `json:"memory"`
	Store          uint64            `json:"storage"`
	ReservedMemory uint64            `json:"reserved_memory"`
	ReservedStore  uint64            `json:"reserved_storage"`
	Accounts       int               `json:"accounts"`
	HAAssets       int               `json:"ha_assets"`
	API            JetStreamAPIStats `json:"api"`
}

// JetStreamAPIStats counts API requests.
type JetStreamAPIStats struct {
	Level  int    `json:"level"`
	Total  uint64 `json:"total"`
	Errors uint64 `json:"errors"`
}

func (m *Monitor) varz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, m.Varz())
}

// Varz returns the /varz document.
func (m *Monitor) Varz() *Varz {
	src := m.opts.Server
	o := src.Options()
	st := src.Stats()
	now := time.Now()
	v := &Varz{
		ID:               src.ID(),
		Name:             src.Name(),
		Version:          src.Version(),
		Proto:            1,
		GoVersion:        runtime.Version(),
		Host:             o.Host,
		AuthRequired:     o.Auth != nil,
		TLSRequired:      o.TLSConfig != nil,
		TLSVerify:        o.TLSConfig != nil && o.TLSConfig.ClientAuth == tls.RequireAndVerifyClientCert,
		MaxConn:          o.MaxConnections,
		PingInterval:     o.PingInterval,
		MaxPingsOut:      o.MaxPingsOut,
		HTTPHost:         m.opts.Host,
		AuthTimeout:      o.AuthTimeout.Seconds(),
		MaxControlLine:   int32(o.MaxControlLine),
		MaxPayload:       int(o.MaxPayload),
		MaxPending:       o.MaxPending,
		Tags:             o.Tags,
		TLSTimeout:       o.TLSTimeout.Seconds(),
		WriteDeadline:    o.WriteDeadline,
		Start:            st.Start.UTC(),
		Now:              now.UTC(),
		Uptime:           uptime(now.Sub(st.Start)),
		Mem:              rss(),
		Cores:            runtime.NumCPU(),
		MaxProcs:         runtime.GOMAXPROCS(0),
		CPU:              m.CPU(),
		Connections:      st.Connections,
		TotalConnections: st.TotalConnections,
		InMsgs:           st.InMsgs,
		InBytes:          st.InBytes,
		InClientMsgs:     st.InMsgs,
		InClientBytes:    st.InBytes,
		OutMsgs:          st.OutMsgs,
		OutBytes:         st.OutBytes,
		OutClientMsgs:    st.OutMsgs,
		OutClientBytes:   st.OutBytes,
		SlowConsumers:    st.SlowConsumers,
		StaleConnections: st.StaleConnections,
		Subscriptions:    uint32(st.Subscriptions),
		HTTPReqStats:     m.reqStats(),
		ConfigLoadTime:   m.opts.ConfigLoadTime.UTC(),
	}
	if v.ConfigLoadTime.IsZero() {
		v.ConfigLoadTime = v.Start
	}
	if ta, ok := src.Addr().(*net.TCPAddr); ok {
		v.Port = ta.Port
	}
	if ta, ok := m.Addr().(*net.TCPAddr); ok {
		v.HTTPPort = ta.Port
	}
	if ws := o.Websocket; ws != nil {
		v.Websocket = &WebsocketVarz{Host: ws.Host, HandshakeTimeout: ws.HandshakeTimeout, NoTLS: ws.TLSConfig == nil,
			SameOrigin: ws.SameOrigin, AllowedOrigins: ws.AllowedOrigins, Compression: ws.Compression}
		if ta, ok := src.WebsocketAddr().(*net.TCPAddr); ok {
			v.Websocket.Port = ta.Port
		}
	}
	if js := m.opts.JetStream; js != nil {
		s := js.Stats()
		n := len(js.AccountDetails(jetstream.DetailOptions{}))
		v.JetStream = &JetStreamVarz{Config: jsConfig(s), Stats: jsStats(s, n)}
	}
	return v
}

// rss is the resident set size of this process from /proc (Linux); 0,
// and so left out of /varz, elsewhere.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
