package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/server"
)

// Source is what the monitor reads from the NATS server.
type Source interface {
	ID() string
	Name() string
	Version() string
	Options() server.Options
	Addr() net.Addr
	WebsocketAddr() net.Addr // nil without a websocket listener
	Stats() server.Stats
	Connections() []server.ConnInfo
	Routes() []server.RouteInfo
}

// JetStream is what the monitor reads from the JetStream layer.
type JetStream interface {
	Stats() jetstream.Stats
	AccountDetails(jetstream.DetailOptions) []jetstream.AccountDetail
}

// Options configure a Monitor.
type Options struct {
	Host string // "" = 0.0.0.0
	Port int    // 0 = a random port (tests)

	Server    Source
	JetStream JetStream // nil = JetStream not enabled
	// Accounts lists the server's accounts; nil means the global account
	// only (accounts.go).
	Accounts AccountSource
	// Raft lists the raft groups of clustered JetStream (raftz.go); nil
	// without a cluster.
	Raft RaftGroups
	// ConfigLoadTime is when the configuration was read (zero = start).
	ConfigLoadTime time.Time
	Logger         *slog.Logger // nil = discard
}

// Monitor is the HTTP monitoring listener.
type Monitor struct {
	opts Options
	ln   net.Listener
	http *http.Server
	cpu  cpuMeter

	mu struct {
		sync.Mutex
		// Guarded by the mutex above: requests served per endpoint.
		reqs map[string]uint64
	}
}

// endpoints are the paths served, in nats-server's names.
var endpoints = []string{"/varz", "/connz", "/routez", "/subsz", "/accountz", "/jsz", "/healthz", "/raftz", "/metrics"}

// New returns a Monitor that builds the documents without listening, for
// the same data served over NATS ($SYS.REQ.SERVER.*). Start listens too.
func New(o Options) (*Monitor, error) {
	if o.Server == nil {
		return nil, errors.New("monitor: no server")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Monitor{opts: o}
	m.mu.reqs = make(map[string]uint64)
	return m, nil
}

// Start listens and serves in the background.
func Start(o Options) (*Monitor, error) {
	if o.Host == "" {
		o.Host = "0.0.0.0"
	}
	m, err := New(o)
	if err != nil {
		return nil, err
	}
	o = m.opts
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("monitor: listen on %s: %w", addr, err)
	}
	m.ln = ln
	prom, err := m.metricsHandler()
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("monitor: /metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/varz", m.count("/varz", m.varz))
	mux.HandleFunc("/connz", m.count("/connz", m.connz))
	mux.HandleFunc("/subsz", m.count("/subsz", m.subsz))
	mux.HandleFunc("/subscriptionsz", m.count("/subsz", m.subsz))
	mux.HandleFunc("/jsz", m.count("/jsz", m.jsz))
	mux.HandleFunc("/accountz", m.count("/accountz", m.accountz))
	mux.HandleFunc("/routez", m.count("/routez", m.routez))
	mux.HandleFunc("/healthz", m.count("/healthz", m.healthz))
	mux.HandleFunc("/raftz", m.count("/raftz", m.raftz))
	mux.HandleFunc("/metrics", m.count("/metrics", prom.ServeHTTP))
	mux.HandleFunc("/{$}", m.count("/", m.index))
	m.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn)}
	go func() {
		if err := m.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.Logger.Error("monitoring listener stopped", "err", err)
		}
	}()
	return m, nil
}

// Addr returns the listen address, nil for a Monitor made by New.
func (m *Monitor) Addr() net.Addr {
	if m.ln == nil {
		return nil
	}
	return m.ln.Addr()
}

// Shutdown stops the listener and waits for requests in flight.
func (m *Monitor) Shutdown(ctx context.Context) error {
	if m.http == nil {
		return nil
	}
	return m.http.Shutdown(ctx)
}

func (m *Monitor) count(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.mu.reqs[name]++
		m.mu.Unlock()
		h(w, r)
	}
}

func (m *Monitor) reqStats() map[string]uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]uint64, len(m.mu.reqs))
	for k, v := range m.mu.reqs {
		out[k] = v
	}
	return out
}

// writeJSON answers with v, indented as nats-server does.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	writeEncoded(w, status, b, err)
}

// writeEncoded answers with b, v's JSON encoding, or with a server error
// when err says encoding it failed.
func writeEncoded(w http.ResponseWriter, status int, b []byte, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// badRequest answers a bad query parameter.
func badRequest(w http.ResponseWriter, format string, args ...any) {
	http.Error(w, fmt.Sprintf(format, args...), http.StatusBadRequest)
}

// queryInt reads a non-negative integer parameter.
func queryInt(r *http.Request, name string, def int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		// nats-server's words.
		return 0, fmt.Errorf("Error decoding int for '%s': %v", name, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative integer", name, s)
	}
	return n, nil
}

// queryAnyInt reads an integer parameter of any sign (0 when absent).
func queryAnyInt(r *http.Request, name string) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		// nats-server's words.
		return 0, fmt.Errorf("Error decoding int for '%s': %v", name, err)
	}
	return n, nil
}

// queryBool reads a boolean parameter ("", "true", "1", "false", "0").
func queryBool(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		// nats-server's words.
		return false, fmt.Errorf("Error decoding boolean for '%s': %v", name, err)
	}
	return b, nil
}

func (m *Monitor) index(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<html><body><h1>jetwal monitoring</h1><ul>\n")
	for _, e := range endpoints {
		fmt.Fprintf(w, "<li><a href=%q>%s</a></li>\n", "."+e, e)
	}
	fmt.Fprintf(w, "</ul></body></html>\n")
}

// uptime renders a duration like nats-server ("1d2h3m4s").
func uptime(d time.Duration) string {
	s := int64(d / time.Second)
	m, h, days := s/60, s/3600, s/86400
	years := days / 365
	switch {
	case years > 0:
		return fmt.Sprintf("%dy%dd%dh%dm%ds", years, days%365, h%24, m%60, s%60)
	case days > 0:
		return fmt.Sprintf("%dd%dh%dm%ds", days, h%24, m%60, s%60)
	case h > 0:
		return fmt.Sprintf("%dh%dm%ds", h, m%60, s%60)
	case m > 0:
		return fmt.Sprintf("%dm%ds", m, s%60)
	}
	return fmt.Sprintf("%ds", s)
}
