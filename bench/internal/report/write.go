package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Files written into the output directory.
const (
	FileReport      = "REPORT.md"
	FilePerformance = "PERFORMANCE.md"
	FileRuns        = "runs.csv"
	FileSummary     = "summary.csv"
	FileGrowth      = "growth.csv"
	FileDurables    = "durables.csv"
	FileData        = "data.json"
)

// Write renders everything for d into dir: REPORT.md, PERFORMANCE.md (the
// README section), the CSV files, the raw data as JSON, and the charts.
// The text files name no absolute path of this machine (see
// pathScrubber).
func Write(dir string, d *Data) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: mkdir %s: %w", dir, err)
	}
	charts, chartErr := WriteCharts(dir, d)
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{FileReport, func(w io.Writer) error { return WriteMarkdown(w, d, charts) }},
		{FilePerformance, func(w io.Writer) error { return WritePerformance(w, d) }},
		{FileRuns, func(w io.Writer) error { return WriteRunsCSV(w, d) }},
		{FileSummary, func(w io.Writer) error { return WriteSummaryCSV(w, d) }},
		{FileGrowth, func(w io.Writer) error { return WriteGrowthCSV(w, d) }},
		{FileDurables, func(w io.Writer) error { return WriteDurablesCSV(w, d) }},
		{FileData, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(d)
		}},
	}
	errs := []error{chartErr}
	scrub := pathScrubber()
	for _, f := range files {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			errs = append(errs, fmt.Errorf("report: %s: %w", f.name, err))
			continue
		}
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, []byte(scrub.Replace(buf.String())), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("report: write %s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}

// ReadData loads the data.json a previous Write produced, so a report can be
// re-rendered without re-running the servers.
func ReadData(path string) (*Data, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: read %s: %w", path, err)
	}
	var d Data
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("report: decode %s: %w", path, err)
	}
	return &d, nil
}
