package main

import (
	"strings"
	"testing"
)

// TestTable: the table and the CSV carry every metric in order, with the
// ratio jetwal / nats-server, and "-" where a figure is missing (a run
// that failed midway, or a zero denominator).
func TestTable(t *testing.T) {
	res := map[string]result{
		"jetwal":      {"create_total": 3, "idle_cpu_per_server": 8},
		"nats-server": {"create_total": 12, "idle_cpu_per_server": 0},
	}
	csv := csvOf(res, 100)
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != len(metrics)+1 {
		t.Fatalf("%d CSV lines, want %d:\n%s", len(lines), len(metrics)+1, csv)
	}
	for want, line := range map[string]string{
		"100,create_total,s,3.00,12.00,0.25":         lines[1],
		"100,idle_cpu_per_server,% core,8.00,0.00,-": lines[1+index("idle_cpu_per_server")],
		"100,rss_per_server,MiB,-,-,-":               lines[1+index("rss_per_server")],
	} {
		if line != want {
			t.Errorf("CSV line %q, want %q", line, want)
		}
	}
	if tbl := render(res, 100); !strings.Contains(tbl, "0.25") || !strings.HasPrefix(tbl, "100 R3 streams") {
		t.Fatalf("table:\n%s", tbl)
	}
}

func index(key string) int {
	for i, m := range metrics {
		if m.key == key {
			return i
		}
	}
	return -1
}
