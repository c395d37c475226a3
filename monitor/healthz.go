package monitor

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/jetwal/jetwal/jetstream"
)

// HealthStatus is /healthz, in nats-server's field names.
type HealthStatus struct {
	Status     string         `json:"status"`
	StatusCode int            `json:"status_code,omitempty"`
	Error      string         `json:"error,omitempty"`
	Errors     []HealthzError `json:"errors,omitempty"`
}

// HealthzError is one failure of a health check asked for with details.
type HealthzError struct {
	Type     HealthzErrorType `json:"type"`
	Account  string           `json:"account,omitempty"`
	Stream   string           `json:"stream,omitempty"`
	Consumer string           `json:"consumer,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// HealthzErrorType is what failed, encoded as nats-server's names.
type HealthzErrorType string

// The failure types jetwal reports.
const (
	HealthzErrorBadRequest HealthzErrorType = "BAD_REQUEST"
	HealthzErrorJetStream  HealthzErrorType = "JETSTREAM"
	HealthzErrorAccount    HealthzErrorType = "ACCOUNT"
	HealthzErrorStream     HealthzErrorType = "STREAM"
	HealthzErrorConsumer   HealthzErrorType = "CONSUMER"
)

// HealthzOptions are /healthz's query parameters and the options of a
// HEALTHZ request, in nats-server's names. js-meta-only is accepted; with
// no meta group to check on a single server it checks what js-server-only
// checks.
type HealthzOptions struct {
	JSEnabled     bool   `json:"js-enabled,omitempty"` // deprecated name of js-enabled-only
	JSEnabledOnly bool   `json:"js-enabled-only,omitempty"`
	JSServerOnly  bool   `json:"js-server-only,omitempty"`
	JSMetaOnly    bool   `json:"js-meta-only,omitempty"`
	Account       string `json:"account,omitempty"`
	Stream        string `json:"stream,omitempty"`
	Consumer      string `json:"consumer,omitempty"`
	Details       bool   `json:"details,omitempty"`
}

func (m *Monitor) healthz(w http.ResponseWriter, r *http.Request) {
	var o HealthzOptions
	for _, b := range []struct {
		name string
		v    *bool
	}{
		{"js-enabled", &o.JSEnabled}, {"js-enabled-only", &o.JSEnabledOnly}, {"js-server-only", &o.JSServerOnly},
		{"js-meta-only", &o.JSMetaOnly}, {"details", &o.Details},
	} {
		var err error
		if *b.v, err = queryBool(r, b.name); err != nil {
			badRequest(w, "%v", err)
			return
		}
	}
	q := r.URL.Query()
	o.Account, o.Stream, o.Consumer = q.Get("account"), q.Get("stream"), q.Get("consumer")
	h := m.Healthz(o)
	status := h.StatusCode
	// As nats-server, the HTTP answer carries the code as its status only,
	// in one line.
	h.StatusCode = 0
	b, err := json.Marshal(h)
	writeEncoded(w, status, b, err)
}

// health collects a check's outcome: without details the first failure
// ends it in Status and Error, with details failures gather in Errors.
type health struct {
	*HealthStatus
	details bool
}

// fail records a failure; it reports whether the check must stop.
func (h health) fail(code int, status string, e HealthzError) bool {
	if h.StatusCode == 0 || h.StatusCode == http.StatusOK {
		h.StatusCode = code
	}
	if !h.details {
		h.Status, h.Error = status, e.Error
		return true
	}
	h.Errors = append(h.Errors, e)
	return false
}

// Healthz returns the health of the server and of its JetStream assets
// for o, with its StatusCode: 200 when healthy (as nats-server's answer
// over NATS).
func (m *Monitor) Healthz(o HealthzOptions) *HealthStatus {
	h := health{HealthStatus: &HealthStatus{Status: "ok"}, details: o.Details}
	m.checkHealth(o, h)
	if h.details {
		h.Status = "ok"
		if len(h.Errors) > 0 {
			h.Status = "error"
		}
	}
	if h.StatusCode == 0 {
		h.StatusCode = http.StatusOK
		if h.Error != "" || len(h.Errors) > 0 {
			h.StatusCode = http.StatusServiceUnavailable
		}
	}
	return h.HealthStatus
}

func (m *Monitor) checkHealth(o HealthzOptions, h health) {
	const na = "unavailable"
	if o.Account == "" && o.Stream != "" {
		h.fail(http.StatusBadRequest, "error", HealthzError{Type: HealthzErrorBadRequest, Error: `"account" must not be empty when checking stream health`})
		return
	}
	if o.Stream == "" && o.Consumer != "" {
		h.fail(http.StatusBadRequest, "error", HealthzError{Type: HealthzErrorBadRequest, Error: `"stream" must not be empty when checking consumer health`})
		return
	}
	// jetwal's JetStream either started with the server or the server did
	// not start, and a single server has no meta group to wait for.
	js := m.opts.JetStream
	if o.JSServerOnly || o.JSMetaOnly || js == nil || o.JSEnabledOnly || o.JSEnabled {
		return
	}
	// Streams or consumers that failed to load make the server unhealthy:
	// an empty or partial server must never look healthy.
	if errs := js.Stats().LoadErrors; len(errs) > 0 {
		if !h.details {
			h.fail(http.StatusServiceUnavailable, na, HealthzError{Error: fmt.Sprintf("JetStream: %d streams or consumers failed to load; first: %s", len(errs), errs[0])})
			return
		}
		for _, e := range errs {
			h.fail(http.StatusServiceUnavailable, na, HealthzError{Type: HealthzErrorJetStream, Error: "JetStream: failed to load: " + e})
		}
	}
	if o.Account == "" {
		return
	}
	var acc *jetstream.AccountDetail
	for _, a := range js.AccountDetails(jetstream.DetailOptions{Streams: o.Stream != "", Consumers: o.Consumer != ""}) {
		if a.Account == o.Account {
			acc = &a
		}
	}
	if acc == nil {
		h.notFound(HealthzError{Type: HealthzErrorAccount, Account: o.Account, Error: fmt.Sprintf("JetStream account %q not found", o.Account)})
		return
	}
	if o.Stream == "" {
		return
	}
	var st *jetstream.StreamDetail
	for i := range acc.Streams {
		if acc.Streams[i].Name == o.Stream {
			st = &acc.Streams[i]
		}
	}
	if st == nil {
		h.notFound(HealthzError{Type: HealthzErrorStream, Account: o.Account, Stream: o.Stream,
			Error: fmt.Sprintf("JetStream stream %q not found on account %q", o.Stream, o.Account)})
		return
	}
	if o.Consumer == "" {
		return
	}
	for _, c := range st.Consumers {
		if c.Name == o.Consumer {
			return
		}
	}
	h.notFound(HealthzError{Type: HealthzErrorConsumer, Account: o.Account, Stream: o.Stream, Consumer: o.Consumer,
		Error: fmt.Sprintf("JetStream consumer %q not found for stream %q on account %q", o.Consumer, o.Stream, o.Account)})
}

// notFound ends a check whose account, stream or consumer does not exist:
// 404, and with details that error alone (as nats-server).
func (h health) notFound(e HealthzError) {
	h.StatusCode = http.StatusNotFound
	if !h.details {
		h.Status, h.Error = "unavailable", e.Error
		return
	}
	h.Errors = []HealthzError{e}
}
