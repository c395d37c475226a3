package monitor

import (
	"net/http"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/monitor/metrics"
)

// metricsHandler serves /metrics (package metrics) for the monitor's
// server and JetStream. A JetStream source without engine figures (a test
// double) exports its /jsz figures only.
func (m *Monitor) metricsHandler() (http.Handler, error) {
	var js metrics.JetStream
	switch j := m.opts.JetStream.(type) {
	case nil:
	case metrics.JetStream:
		js = j
	default:
		js = noEngine{j}
	}
	return metrics.Handler(m.opts.Server, js, m.opts.Logger)
}

// noEngine is a JetStream source with no storage engine figures.
type noEngine struct{ JetStream }

func (noEngine) EngineStats() jetstream.EngineStats { return jetstream.EngineStats{} }
