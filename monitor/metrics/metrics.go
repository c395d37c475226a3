// Package metrics exports a jetwal server's figures in the Prometheus text
// format (/metrics on the monitoring port), with prometheus/client_golang.
//
// It is the only place that knows Prometheus. The server, JetStream and
// the storage engine expose plain snapshots (server.Stats,
// jetstream.Stats, jetstream.EngineStats with wal.MetricsSnapshot and
// wal.Stats); a Collector reads them at scrape time and turns them into
// metrics, so nothing is counted twice and the engine packages import no
// metrics library. The metric names are listed in the README ("Running in
// production", Monitoring).
package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/server"
)

// Server is what the collector reads from the NATS server.
type Server interface {
	Stats() server.Stats
}

// JetStream is what the collector reads from the JetStream layer.
type JetStream interface {
	Stats() jetstream.Stats
	EngineStats() jetstream.EngineStats
}

// Handler serves /metrics for srv and js (nil: JetStream not enabled),
// with the Go runtime's and the process's standard metrics beside them.
// It uses a registry of its own, never the global one.
func Handler(srv Server, js JetStream, log *slog.Logger) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		NewCollector(srv, js),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}
	if log != nil {
		opts.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	}
	return promhttp.HandlerFor(reg, opts), nil
}

// Collector turns the snapshots into metrics at each scrape.
type Collector struct {
	srv Server
	js  JetStream
	now func() time.Time
}

// NewCollector returns a Collector for srv and js (nil: no JetStream).
func NewCollector(srv Server, js JetStream) *Collector {
	return &Collector{srv: srv, js: js, now: time.Now}
}

// Describe sends the descriptors of every metric the collector can send.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect reads the snapshots and sends the metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	e := emitter{ch: ch}
	st := c.srv.Stats()
	e.gauge(dConnections, float64(st.Connections))
	e.counter(dConnectionsTotal, float64(st.TotalConnections))
	e.counter(dInMsgs, float64(st.InMsgs))
	e.counter(dInBytes, float64(st.InBytes))
	e.counter(dOutMsgs, float64(st.OutMsgs))
	e.counter(dOutBytes, float64(st.OutBytes))
	e.gauge(dSubscriptions, float64(st.Subscriptions))
	e.counter(dSlowConsumers, float64(st.SlowConsumers))
	e.gauge(dStartTime, float64(st.Start.UnixNano())/1e9)
	if c.js == nil {
		return
	}
	js := c.js.Stats()
	e.gauge(dStreams, float64(js.Streams))
	e.gauge(dConsumers, float64(js.Consumers))
	e.gauge(dMessages, float64(js.Messages))
	e.gauge(dBytes, float64(js.Bytes))
	e.gauge(dStorageBytes, float64(js.Memory), "memory")
	e.gauge(dStorageBytes, float64(js.Store), "file")
	e.counter(dAPIRequests, float64(js.APITotal))
	e.counter(dAPIErrors, float64(js.APIErrors))
	e.gauge(dLoadErrors, float64(len(js.LoadErrors)))
	c.collectEngine(&e, c.js.EngineStats())
}

func (c *Collector) collectEngine(e *emitter, es jetstream.EngineStats) {
	w := es.WAL
	e.counter(dAppendedMsgs, float64(w.Appends))
	e.counter(dAppendedBytes, float64(w.AppendBytes))
	e.counter(dFsyncs, float64(w.Fsyncs))
	e.counter(dCheckpoints, float64(w.Checkpoints))
	e.histogram(dFsyncSeconds, w.Fsyncs, w.FsyncSeconds, w.FsyncBuckets)
	e.histogram(dMsgsPerFsync, w.Commits, float64(w.CommitMsgs), w.CommitBuckets)
	now := c.now()
	for _, s := range es.Streams {
		e.gauge(dStreamLastSeq, float64(s.LastSeq), s.Name, s.Storage)
		if f := s.Files; f != nil {
			e.gauge(dSegments, float64(f.Segments), s.Name)
			e.gauge(dSegmentBytes, float64(f.SegmentBytes), s.Name)
			e.gauge(dMappedBytes, float64(f.MappedBytes), s.Name)
			e.gauge(dCheckpointAge, now.Sub(f.LastCheckpoint).Seconds(), s.Name)
			e.gauge(dRecoverySeconds, f.Recovery.Seconds(), s.Name)
			e.counter(dCorruptRecords, float64(f.CorruptRecords), s.Name)
		}
		for _, cs := range s.Consumers {
			e.gauge(dAckFloorLag, float64(cs.AckFloorLag(s.LastSeq)), s.Name, cs.Name)
			e.gauge(dAckPending, float64(cs.AckPending), s.Name, cs.Name)
		}
	}
}
