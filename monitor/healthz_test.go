package monitor

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/server"
)

// healthz fetches /healthz?query and returns its status and document.
func healthz(t *testing.T, addr, query string) (int, HealthStatus) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h HealthStatus
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("healthz?%s: %v", query, err)
	}
	return resp.StatusCode, h
}

// TestHealthzOptions: nats-server's account, stream and consumer checks,
// with and without details, and its bad-request answers.
func TestHealthzOptions(t *testing.T) {
	f := jsFixture(t)
	addr := f.mon.Addr().String()
	cases := []struct {
		query  string
		status int
		want   HealthStatus
	}{
		{"details=true", 200, HealthStatus{Status: "ok"}},
		{"account=$G&stream=ORD&consumer=C1", 200, HealthStatus{Status: "ok"}},
		{"account=$G&stream=MEM&details=true", 200, HealthStatus{Status: "ok"}},
		{"account=NOPE", 404, HealthStatus{Status: "unavailable", Error: `JetStream account "NOPE" not found`}},
		{"account=$G&stream=NOPE", 404, HealthStatus{Status: "unavailable", Error: `JetStream stream "NOPE" not found on account "$G"`}},
		{"account=$G&stream=ORD&consumer=C9&details=true", 404, HealthStatus{Status: "error", Errors: []HealthzError{{
			Type: HealthzErrorConsumer, Account: "$G", Stream: "ORD", Consumer: "C9",
			Error: `JetStream consumer "C9" not found for stream "ORD" on account "$G"`}}}},
		{"stream=ORD", 400, HealthStatus{Status: "error", Error: `"account" must not be empty when checking stream health`}},
		{"consumer=C1&details=1", 400, HealthStatus{Status: "error", Errors: []HealthzError{{
			Type: HealthzErrorBadRequest, Error: `"stream" must not be empty when checking consumer health`}}}},
		// Only the server is checked: the missing stream does not matter.
		{"js-server-only=true&account=$G&stream=NOPE", 200, HealthStatus{Status: "ok"}},
		{"js-enabled-only=true&account=$G&stream=NOPE", 200, HealthStatus{Status: "ok"}},
	}
	for _, c := range cases {
		status, h := healthz(t, addr, c.query)
		if status != c.status || !reflect.DeepEqual(h, c.want) {
			t.Errorf("healthz?%s = %d %+v, want %d %+v", c.query, status, h, c.status, c.want)
		}
	}
	for _, q := range []string{"details=maybe", "js-server-only=2", "js-meta-only=x"} {
		f.raw(t, "/healthz?"+q, http.StatusBadRequest)
	}
	body := f.raw(t, "/healthz?js-enabled=maybe", http.StatusBadRequest)
	if want := `Error decoding boolean for 'js-enabled': strconv.ParseBool: parsing "maybe": invalid syntax`; strings.TrimSpace(string(body)) != want {
		t.Errorf("bad boolean: %q, want nats-server's %q", body, want)
	}
	// Over NATS the status code is in the document.
	if h := f.mon.Healthz(HealthzOptions{Account: "NOPE"}); h.StatusCode != 404 {
		t.Errorf("Healthz: %+v", h)
	}
	if h := f.mon.Healthz(HealthzOptions{}); h.StatusCode != 200 || h.Status != "ok" {
		t.Errorf("Healthz: %+v", h)
	}
}

// TestHealthzLoadErrorsDetails: streams that failed to load make the
// server unhealthy unless only the server is asked about; with details
// each failure is listed.
func TestHealthzLoadErrorsDetails(t *testing.T) {
	srv, err := server.New(server.Options{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	mon, err := Start(Options{Host: "127.0.0.1", Server: srv, JetStream: failedJS{}})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Shutdown(context.Background())
	addr := mon.Addr().String()
	status, h := healthz(t, addr, "details=true")
	if status != 503 || h.Status != "error" || len(h.Errors) != 1 || h.Errors[0].Type != HealthzErrorJetStream || h.Error != "" {
		t.Errorf("details with a failed load: %d %+v", status, h)
	}
	if status, h = healthz(t, addr, "js-server-only=true"); status != 200 || h.Status != "ok" {
		t.Errorf("js-server-only with a failed load: %d %+v", status, h)
	}
	if status, h = healthz(t, addr, ""); status != 503 || h.Status != "unavailable" || h.Error == "" {
		t.Errorf("a failed load: %d %+v", status, h)
	}
}
