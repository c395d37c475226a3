package serve

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads /metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: status %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse as Prometheus text: %v", err)
	}
	return fams
}

// metricValue returns the value of the sample of name whose labels include
// want (a counter, gauge, or a histogram's count), and whether it exists.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func mustValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := metricValue(fams, name, labels)
	if !ok {
		t.Fatalf("metric %s%v missing from /metrics", name, labels)
	}
	return v
}

// TestServeMetrics starts serve with -m, scrapes /metrics, publishes to a
// file stream under sync always, and checks that the storage engine's
// figures moved: appends, bytes, fsyncs and their latency histogram,
// messages per fsync, segments, and a consumer's ack-floor lag.
func TestServeMetrics(t *testing.T) {
	conf := writeConf(t, fmt.Sprintf("listen: 127.0.0.1:0\njetstream { store_dir: %q, sync_interval: always }\n", t.TempDir()))
	r := startServe(t, "-c", conf, "-m", "-1")
	m := monitorRE.FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatalf("no monitoring address in:\n%s", r.logs)
	}
	mon := m[1]

	before := scrape(t, mon)
	for _, name := range []string{"jetwal_server_connections", "jetwal_wal_fsyncs_total", "jetwal_wal_fsync_duration_seconds",
		"jetwal_wal_msgs_per_fsync", "jetwal_jetstream_streams", "go_goroutines"} {
		if before[name] == nil {
			t.Errorf("metric %s missing before any traffic", name)
		}
	}
	if f := before["jetwal_wal_fsync_duration_seconds"]; f != nil && f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("fsync latency is a %v, want a histogram", f.GetType())
	}
	fsyncs0 := mustValue(t, before, "jetwal_wal_fsyncs_total", nil)
	appends0 := mustValue(t, before, "jetwal_wal_appended_msgs_total", nil)
	bytes0 := mustValue(t, before, "jetwal_wal_appended_bytes_total", nil)
	in0 := mustValue(t, before, "jetwal_server_in_msgs_total", nil)

	nc, err := nats.Connect("nats://"+r.addr, nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", njs.ConsumerConfig{Durable: "PROC", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	payload := make([]byte, 100)
	for i := 0; i < n; i++ {
		if _, err := js.Publish(ctx, "orders.new", payload); err != nil {
			t.Fatal(err)
		}
	}
	// Ack 10 of them: the ack floor moves to 10, 40 behind the stream.
	batch, err := cons.Fetch(10, njs.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	for msg := range batch.Messages() {
		if err := msg.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
		acked++
	}
	if acked != 10 {
		t.Fatalf("fetched %d of 10", acked)
	}

	after := scrape(t, mon)
	fsyncs := mustValue(t, after, "jetwal_wal_fsyncs_total", nil)
	if fsyncs < fsyncs0+n {
		// Sync always and one publisher waiting for each PubAck: one fsync
		// (at least) per message.
		t.Errorf("fsyncs %v -> %v after %d synchronous publishes", fsyncs0, fsyncs, n)
	}
	if got := mustValue(t, after, "jetwal_wal_appended_msgs_total", nil); got != appends0+n {
		t.Errorf("appended msgs %v -> %v, want +%d", appends0, got, n)
	}
	if got := mustValue(t, after, "jetwal_wal_appended_bytes_total", nil); got < bytes0+n*float64(len(payload)) {
		t.Errorf("appended bytes %v -> %v, want at least +%d", bytes0, got, n*len(payload))
	}
	if got := mustValue(t, after, "jetwal_wal_fsync_duration_seconds", nil); got != fsyncs {
		t.Errorf("fsync latency histogram counts %v fsyncs, the counter %v", got, fsyncs)
	}
	h := after["jetwal_wal_msgs_per_fsync"].Metric[0].Histogram
	if h.GetSampleCount() == 0 || h.GetSampleSum() < n {
		t.Errorf("msgs per fsync: %d commits, %v messages; want at least %d messages", h.GetSampleCount(), h.GetSampleSum(), n)
	}
	if got := mustValue(t, after, "jetwal_server_in_msgs_total", nil); got < in0+n {
		t.Errorf("server in msgs %v -> %v", in0, got)
	}
	stream := map[string]string{"stream": "ORDERS"}
	if got := mustValue(t, after, "jetwal_stream_segments", stream); got < 1 {
		t.Errorf("segments %v", got)
	}
	if got := mustValue(t, after, "jetwal_stream_segment_bytes", stream); got < n*float64(len(payload)) {
		t.Errorf("segment bytes %v", got)
	}
	if got := mustValue(t, after, "jetwal_stream_mapped_bytes", stream); got <= 0 {
		t.Errorf("mapped bytes %v", got)
	}
	if got := mustValue(t, after, "jetwal_stream_checkpoint_age_seconds", stream); got < 0 || got > 600 {
		t.Errorf("checkpoint age %v s", got)
	}
	if got := mustValue(t, after, "jetwal_stream_recovery_seconds", stream); got < 0 || got > 60 {
		t.Errorf("recovery %v s", got)
	}
	if got := mustValue(t, after, "jetwal_stream_corrupt_records_total", stream); got != 0 {
		t.Errorf("corrupt records %v in a healthy stream", got)
	}
	if got := mustValue(t, after, "jetwal_stream_last_seq", map[string]string{"stream": "ORDERS", "storage": "file"}); got != n {
		t.Errorf("last seq %v", got)
	}
	consumer := map[string]string{"stream": "ORDERS", "consumer": "PROC"}
	if got := mustValue(t, after, "jetwal_consumer_ack_floor_lag", consumer); got != n-10 {
		t.Errorf("ack floor lag %v, want %d", got, n-10)
	}
	if got := mustValue(t, after, "jetwal_jetstream_streams", nil); got != 1 {
		t.Errorf("streams %v", got)
	}
}
