package report

import (
	"fmt"
	"slices"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// DiskRate is the median and range of the successful disk measurements;
// N is 0 when there are none.
type DiskRate struct {
	Median, Min, Max float64
	N                int
}

// SummarizeDisk reduces d.Disk to one rate.
func SummarizeDisk(d *Data) DiskRate {
	var v []float64
	for _, p := range d.Disk {
		if p.Err == "" && p.MiBps > 0 {
			v = append(v, p.MiBps)
		}
	}
	if len(v) == 0 {
		return DiskRate{}
	}
	return DiskRate{Median: Median(v), Min: slices.Min(v), Max: slices.Max(v), N: len(v)}
}

// syncsBeforeAck reports whether a server of kind k acknowledges a stored
// message only after fsyncing it, in mode.
func syncsBeforeAck(k proc.Kind, mode proc.Mode) bool {
	return mode == proc.ModeSyncAlways || k == proc.KindJetwal
}

// shareLabel renders v as a share of the disk rate.
func shareLabel(v float64, disk DiskRate) string {
	if v <= 0 || disk.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*v/disk.Median)
}

// diskLine sums the disk section up for the targets: the disk's rate and
// the share of it A's default-mode async publish stored at the largest
// sizes; "" when the disk was not measured.
func diskLine(d *Data, rows []Row) string {
	disk := SummarizeDisk(d)
	if disk.N == 0 {
		return ""
	}
	s := fmt.Sprintf("Disk: this machine's disk took durable writes at %s MiB/s (median of %d sessions; see the Disk section of the full report).", mbLabel(disk.Median), disk.N)
	for _, r := range rows {
		if r.Workload == workload.JSPubAsync && r.Mode == proc.ModeDefault && r.Size >= 16<<10 && r.A.MBs > 0 && syncsBeforeAck(d.Meta.A.Kind, r.Mode) {
			s += fmt.Sprintf(" At %s, %s's async publish stored %s MiB/s, %s of it.", SizeLabel(r.Size), d.Meta.A.Name, mbLabel(r.A.MBs), shareLabel(r.A.MBs, disk))
		}
	}
	return s
}

// writeDisk renders the disk measurement and, for each async publish row,
// the payload rate each server stored as a share of it.
func writeDisk(m *md, d *Data, rows []Row) {
	disk := SummarizeDisk(d)
	if disk.N == 0 && len(d.Disk) == 0 {
		return
	}
	m.f("## Disk\n\n")
	m.f("Before each session's servers start, the bench measures how fast the disk under the store directories takes durable writes: %d MiB in %d MiB pwrites into fresh %d MiB files preallocated with fallocate, fdatasync after every %d MiB. That is how jetwal writes its segments when it syncs before acknowledging, so the rate is the ceiling of a server that does, however little CPU it spends. ",
		diskMiB(d), proc.DiskWriteSize>>20, proc.DiskFileSize>>20, proc.DiskSyncEvery>>20)
	if disk.N == 0 {
		m.f("No measurement succeeded (see the notes).\n\n")
		return
	}
	m.f("Median %s MiB/s, %s–%s MiB/s over %d sessions.\n\n", mbLabel(disk.Median), mbLabel(disk.Min), mbLabel(disk.Max), disk.N)
	m.f("Async publish payload rates (MiB/s, medians) as a share of it. A server that acknowledges before it syncs (nats-server by default) is not bound by the disk within a run; the kernel writes its data back later.\n\n")
	var out [][]string
	for _, r := range rows {
		if r.Workload != workload.JSPubAsync {
			continue
		}
		row := []string{string(r.Mode), SizeLabel(r.Size)}
		for i, s := range []Side{r.A, r.B} {
			info := []ServerInfo{d.Meta.A, d.Meta.B}[i]
			share := shareLabel(s.MBs, disk)
			if !syncsBeforeAck(info.Kind, r.Mode) && s.MBs > 0 {
				share += " (no sync)"
			}
			row = append(row, mbLabel(s.MBs), share)
		}
		out = append(out, row)
	}
	a, b := d.Meta.A.Name, d.Meta.B.Name
	m.table([]string{"mode", "size", a + " MiB/s", a + " share of disk", b + " MiB/s", b + " share of disk"}, out)
}

// diskMiB is the size of one disk measurement, from the settings of the
// run: quick mode writes less.
func diskMiB(d *Data) int {
	if d.Meta.Quick {
		return DiskMeasureBytesQuick >> 20
	}
	return DiskMeasureBytes >> 20
}

// Bytes one disk measurement writes (the suite uses these): four of
// proc.DiskFileSize, about a quarter of a second at 1 GB/s.
const (
	DiskMeasureBytes      = 256 << 20
	DiskMeasureBytesQuick = 64 << 20
)
