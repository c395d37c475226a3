package metrics

import (
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

type fakeServer struct{ st server.Stats }

func (f fakeServer) Stats() server.Stats { return f.st }

type fakeJS struct {
	st jetstream.Stats
	es jetstream.EngineStats
}

func (f fakeJS) Stats() jetstream.Stats             { return f.st }
func (f fakeJS) EngineStats() jetstream.EngineStats { return f.es }
func scrapeHandler(t *testing.T, srv Server, js JetStream) map[string]*dto.MetricFamily {
	t.Helper()
	h, err := Handler(srv, js, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("%s missing", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s%v missing", name, labels)
	return nil
}

// TestCollectorMapsSnapshots: each snapshot field lands in its metric,
// with its type and labels, and the histograms keep the engine's buckets.
func TestCollectorMapsSnapshots(t *testing.T) {
	srv := fakeServer{server.Stats{Connections: 3, TotalConnections: 9, InMsgs: 100, InBytes: 5000, OutMsgs: 7, OutBytes: 70, Subscriptions: 12}}
	js := fakeJS{
		st: jetstream.Stats{Streams: 1, Consumers: 1, Messages: 40, Bytes: 4000, Store: 4000, APITotal: 5, APIErrors: 1},
		es: jetstream.EngineStats{
			WAL: wal.MetricsSnapshot{
				Appends: 40, AppendBytes: 4000, Fsyncs: 4, FsyncSeconds: 0.002, Checkpoints: 1,
				FsyncBuckets: []wal.Bucket{{UpperBound: 0.0005, Count: 3}, {UpperBound: 0.001, Count: 4}},
				Commits:      3, CommitMsgs: 40,
				CommitBuckets: []wal.Bucket{{UpperBound: 1, Count: 1}, {UpperBound: 32, Count: 3}},
			},
			Streams: []jetstream.StreamEngineStats{{
				Name: "ORDERS", Storage: "file", LastSeq: 40,
				Files: &wal.Stats{Segments: 2, SegmentBytes: 9000, MappedBytes: 16384,
					LastCheckpoint: time.Now().Add(-90 * time.Second), Recovery: 1500 * time.Millisecond, CorruptRecords: 2},
				Consumers: []jetstream.ConsumerEngineStats{{Name: "PROC", AckFloor: 15, Delivered: 30, AckPending: 4}},
			}},
		},
	}
	fams := scrapeHandler(t, srv, js)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"jetwal_server_connections", nil, 3},
		{"jetwal_server_connections_total", nil, 9},
		{"jetwal_server_in_msgs_total", nil, 100},
		{"jetwal_server_in_bytes_total", nil, 5000},
		{"jetwal_server_subscriptions", nil, 12},
		{"jetwal_jetstream_api_errors_total", nil, 1},
		{"jetwal_jetstream_storage_bytes", []string{"storage", "file"}, 4000},
		{"jetwal_wal_appended_msgs_total", nil, 40},
		{"jetwal_wal_fsyncs_total", nil, 4},
		{"jetwal_stream_segments", []string{"stream", "ORDERS"}, 2},
		{"jetwal_stream_segment_bytes", []string{"stream", "ORDERS"}, 9000},
		{"jetwal_stream_mapped_bytes", []string{"stream", "ORDERS"}, 16384},
		{"jetwal_stream_recovery_seconds", []string{"stream", "ORDERS"}, 1.5},
		{"jetwal_stream_corrupt_records_total", []string{"stream", "ORDERS"}, 2},
		{"jetwal_consumer_ack_floor_lag", []string{"stream", "ORDERS", "consumer", "PROC"}, 25},
		{"jetwal_consumer_ack_pending", []string{"stream", "ORDERS", "consumer", "PROC"}, 4},
	} {
		m := sample(t, fams, c.name, c.labels...)
		got := m.GetGauge().GetValue() + m.GetCounter().GetValue()
		if got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if age := sample(t, fams, "jetwal_stream_checkpoint_age_seconds", "stream", "ORDERS").GetGauge().GetValue(); age < 90 || age > 600 {
		t.Errorf("checkpoint age %v s, want about 90", age)
	}
	h := sample(t, fams, "jetwal_wal_fsync_duration_seconds").GetHistogram()
	if h.GetSampleCount() != 4 || h.GetSampleSum() != 0.002 || len(h.Bucket) != 3 || h.Bucket[0].GetCumulativeCount() != 3 {
		t.Errorf("fsync histogram %v", h)
	}
	h = sample(t, fams, "jetwal_wal_msgs_per_fsync").GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 40 || h.Bucket[1].GetUpperBound() != 32 {
		t.Errorf("msgs per fsync histogram %v", h)
	}
	if fams["go_goroutines"] == nil {
		t.Error("no Go runtime metrics")
	}
}

// TestCollectorWithoutJetStream: a server without JetStream exports its
// server figures and no JetStream or engine metric.
func TestCollectorWithoutJetStream(t *testing.T) {
	fams := scrapeHandler(t, fakeServer{server.Stats{Connections: 1}}, nil)
	sample(t, fams, "jetwal_server_connections")
	for name := range fams {
		if len(name) > 7 && (name[:7] == "jetwal_" && name[:14] != "jetwal_server_") {
			t.Errorf("metric %s without JetStream", name)
		}
	}
}
