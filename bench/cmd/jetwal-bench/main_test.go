package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// fakeBinary writes an executable file so flag validation passes.
func fakeBinary(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseFlags(t *testing.T) {
	bin := fakeBinary(t)
	o, err := parseFlags([]string{"-quick", "-jetwal", bin, "-nats-server", bin, "-growth", "20k,1M", "-sizes", "16,128", "-modes", "sync-always", "-reps", "4", "-workloads", "js-pub-async,js-fetch"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.cfg.Quick || o.cfg.Reps != 4 || !slices.Equal(o.cfg.GrowthTargets, []int64{20_000, 1_000_000}) ||
		!slices.Equal(o.cfg.Sizes, []int{16, 128}) || !slices.Equal(o.cfg.Modes, []proc.Mode{proc.ModeSyncAlways}) ||
		!slices.Equal(o.cfg.Workloads, []workload.Name{workload.JSPubAsync, workload.JSFetch}) {
		t.Fatalf("parsed %+v", o.cfg)
	}
	if o.a.Kind != proc.KindJetwal || o.b.Kind != proc.KindNATSServer || o.a.Name == o.b.Name {
		t.Fatalf("servers %+v %+v", o.a, o.b)
	}
	o, err = parseFlags([]string{"-a-kind", "nats-server", "-jetwal", bin, "-nats-server", bin, "-growth", "none"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.a.Kind != proc.KindNATSServer || o.a.Name == o.b.Name || o.cfg.GrowthTargets != nil || o.cfg.Quick || o.cfg.GrowthOnly {
		t.Fatalf("peer-vs-peer parse %+v %+v %+v", o.a, o.b, o.cfg)
	}
	tmp := t.TempDir()
	if o, err = parseFlags([]string{"-jetwal", bin, "-nats-server", bin, "-tmp", tmp}, io.Discard); err != nil || o.cfg.TmpDir != tmp {
		t.Fatalf("-tmp %s: %v, %q", tmp, err, o.cfg.TmpDir)
	}
	o, err = parseFlags([]string{"-growth-only", "-jetwal", bin, "-nats-server", bin, "-growth", "1M,100M", "-growth-budget", "30m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.cfg.GrowthOnly || o.cfg.GrowthBudget != 30*time.Minute || !slices.Equal(o.cfg.GrowthTargets, []int64{1_000_000, 100_000_000}) {
		t.Fatalf("growth-only parse %+v", o.cfg)
	}
	for _, bad := range [][]string{
		{"-jetwal", bin, "-nats-server", bin, "-growth", "10M,1M"},
		{"-jetwal", bin, "-nats-server", bin, "-modes", "fast"},
		{"-jetwal", bin, "-nats-server", bin, "-workloads", "nope"},
		{"-jetwal", bin, "-nats-server", bin, "-a-kind", "redis"},
		{"-jetwal", filepath.Join(t.TempDir(), "missing"), "-nats-server", bin},
		{"-jetwal", bin, "-nats-server", bin, "extra"},
		{"-jetwal", bin, "-nats-server", bin, "-tmp", filepath.Join(t.TempDir(), "missing")},
		{"-jetwal", bin, "-nats-server", bin, "-tmp", bin},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

// TestRerender checks that a saved data.json renders into a report without
// running servers.
func TestRerender(t *testing.T) {
	d := report.Data{Meta: report.Meta{
		A: report.ServerInfo{Name: "jetwal"}, B: report.ServerInfo{Name: "nats-server"},
		Reps: 1, Sizes: []int{128}, Modes: []proc.Mode{proc.ModeDefault}, Started: time.Unix(0, 0), Finished: time.Unix(1, 0),
	}}
	for _, name := range []string{"jetwal", "nats-server"} {
		d.Runs = append(d.Runs, report.Run{Mode: proc.ModeDefault, Rep: 1, Server: name, Workload: workload.CorePub, Size: 128,
			Result: workload.Result{Msgs: 100, Bytes: 12800, Elapsed: time.Millisecond}})
	}
	dir := t.TempDir()
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "data.json")
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-rerender", in, "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, report.FileReport))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| core publish, no subscriber | messages per second one client publishes with core NATS (no JetStream) while nobody subscribes | 128 B | default | msgs/s | 1.00× | 1.00× | ≥ 1× | **met** |") {
		t.Fatalf("report:\n%s", md)
	}
	if !strings.Contains(stdout.String(), "2 runs, 0 failed") {
		t.Fatalf("summary: %s", stdout.String())
	}
}
