package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// diskData is one 16 KiB async publish per server and mode: jetwal stores
// 781.25 MiB/s, nats-server 625 MiB/s; the disk measured 900, 1000 and
// 1100 MiB/s, and failed once.
func diskData() *Data {
	d := &Data{Meta: Meta{
		A: ServerInfo{Name: "jetwal", Kind: proc.KindJetwal}, B: ServerInfo{Name: "nats-server", Kind: proc.KindNATSServer},
		Reps: 1, Sizes: []int{16384}, Modes: proc.Modes,
	}}
	for _, mode := range proc.Modes {
		for i, name := range []string{"jetwal", "nats-server"} {
			el := 20 * time.Millisecond
			if i == 1 {
				el = 25 * time.Millisecond
			}
			d.Runs = append(d.Runs, Run{Mode: mode, Rep: 1, Server: name, Workload: workload.JSPubAsync, Size: 16384, Count: 1000,
				Result: workload.Result{Msgs: 1000, Bytes: 1000 * 16384, Elapsed: el}})
		}
	}
	d.Disk = []DiskPoint{{MiBps: 1100}, {Err: "fdatasync: EIO"}, {MiBps: 900}, {MiBps: 1000}}
	return d
}

func TestSummarizeDisk(t *testing.T) {
	got := SummarizeDisk(diskData())
	if want := (DiskRate{Median: 1000, Min: 900, Max: 1100, N: 3}); got != want {
		t.Fatalf("disk rate %+v, want %+v (the failed measurement left out)", got, want)
	}
	if got := SummarizeDisk(&Data{Disk: []DiskPoint{{Err: "x"}}}); got.N != 0 {
		t.Fatalf("only failures: %+v", got)
	}
}

func TestDiskReported(t *testing.T) {
	d := diskData()
	rows := Summarize(d)
	want := "Disk: this machine's disk took durable writes at 1000 MiB/s (median of 3 sessions; see the Disk section of the full report). At 16 KiB, jetwal's async publish stored 781 MiB/s, 78% of it."
	if got := diskLine(d, rows); got != want {
		t.Fatalf("disk line\n%q\nwant\n%q", got, want)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, s := range []string{
		"## Disk",
		"Median 1000 MiB/s, 900–1100 MiB/s over 3 sessions.",
		"| default | 16 KiB | 781 | 78% | 625 | 62% (no sync) |",
		"| sync-always | 16 KiB | 781 | 78% | 625 | 62% |",
		want,
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}

	d.Disk = nil
	if got := diskLine(d, rows); got != "" {
		t.Fatalf("disk line without measurements: %q", got)
	}
	buf.Reset()
	if err := WriteMarkdown(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "## Disk") {
		t.Fatal("disk section without measurements")
	}
}
