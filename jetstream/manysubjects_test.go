package jetstream

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
)

func manySubjectsConfig(name string, n int) string {
	subjects := make([]string, n)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("%s.region%d.store%d.*", name, i%50, i)
	}
	b, _ := json.Marshal(api.StreamConfig{Name: name, Subjects: subjects, Storage: api.MemoryStorage})
	return string(b)
}

// BenchmarkStreamCreate10kSubjects creates a stream of 10,000 subjects next
// to another stream, through the API: the overlap checks within the stream
// and against the other take a tree walk per subject (it took 20 s when
// every pair was compared; the target is at most 100 ms).
func BenchmarkStreamCreate10kSubjects(b *testing.B) {
	srv, stop := benchServer(b, Config{})
	defer stop()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	other := manySubjectsConfig("other", 10000)
	if _, err := nc.Request("$JS.API.STREAM.CREATE.other", []byte(other), 30*time.Second); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("big%d", i)
		i++
		cfg := manySubjectsConfig(name, 10000)
		start := time.Now()
		m, err := nc.Request("$JS.API.STREAM.CREATE."+name, []byte(cfg), 30*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "ms/create")
		var r api.Response
		if json.Unmarshal(m.Data, &r); r.Error != nil {
			b.Fatal(r.Error)
		}
	}
}

// TestStreamManySubjectsOverlap: a 10,000-subject stream is created, and an
// overlap with one of its subjects, within a stream or across streams, is
// still refused.
func TestStreamManySubjectsOverlap(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	m := request(t, nc, "$JS.API.STREAM.CREATE.big", manySubjectsConfig("big", 10000))
	if aerr := apiErrorOf(t, m.Data); aerr != nil {
		t.Fatalf("create: %v", aerr)
	}
	m = request(t, nc, "$JS.API.STREAM.CREATE.clash", `{"name":"clash","subjects":["big.region7.store9957.x"]}`)
	if aerr := apiErrorOf(t, m.Data); aerr == nil || aerr.ErrCode != api.ErrStreamSubjectOverlap {
		t.Fatalf("overlapping stream: %s, want 10065", m.Data)
	}
	m = request(t, nc, "$JS.API.STREAM.CREATE.self", `{"name":"self","subjects":["s.a.*","s.b","s.*.c"]}`)
	if aerr := apiErrorOf(t, m.Data); aerr == nil || aerr.ErrCode != api.ErrStreamInvalidConfig {
		t.Fatalf("subjects overlapping each other: %s, want an invalid config error", m.Data)
	}
}
