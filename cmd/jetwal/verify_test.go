package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// makeStore lays out one stream the way the server does, with 60 messages
// over several small segments, a checkpoint and a consumer. It returns the
// store root and the stream directory.
func makeStore(t *testing.T) (root, stream string) {
	t.Helper()
	root = t.TempDir()
	stream = filepath.Join(root, "jetstream", "$G", "streams", "ORDERS")
	s, err := wal.Open(filepath.Join(stream, "msgs"), wal.Options{SegmentSize: 4096, Sync: wal.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		hdr := []byte(fmt.Sprintf("NATS/1.0\r\nK: %d\r\n\r\n", i))
		if _, _, err := s.Append(fmt.Sprintf("orders.%d", i%3), hdr, bytes.Repeat([]byte{byte(i)}, 150)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	meta := []byte(`{"Created":"2026-01-01T00:00:00Z","name":"ORDERS","subjects":["orders.>"]}`)
	if err := os.WriteFile(filepath.Join(stream, "meta.inf"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%016x", xxhash.Sum64(meta))
	if err := os.WriteFile(filepath.Join(stream, "meta.sum"), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := consumerstate.Open(filepath.Join(stream, "obs"), consumerstate.Options{Sync: consumerstate.SyncAlways()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cs.Create("worker", []byte(`{"durable_name":"worker"}`))
	if err != nil {
		t.Fatal(err)
	}
	c.Update(func(s *consumerstate.State) {
		for q := consumerstate.StreamSeq(1); q <= 5; q++ {
			s.Deliver(q, 1, 1)
		}
		s.Ack(1)
	})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	return root, stream
}

// recordOffset finds the file offset of seq's record in a segment file.
func recordOffset(t *testing.T, path string, seq uint64) int64 {
	t.Helper()
	seg, err := segment.Open(vfs.Default, path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	at := int64(-1)
	seg.Scan(func(off int64, r *segment.Record) error {
		if r.Seq == seq && !r.Tombstone() {
			at = off
		}
		return nil
	})
	if at < 0 {
		t.Fatalf("sequence %d not in %s", seq, path)
	}
	return at
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestVerifyCleanStore(t *testing.T) {
	root, _ := makeStore(t)
	// A server's store directory holds its LOCK file beside the accounts.
	if err := os.WriteFile(filepath.Join(root, "jetstream", "LOCK"), []byte("pid 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd("verify", root)
	if code != 0 {
		t.Fatalf("exit %d on a clean store:\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "1 streams checked") || !strings.Contains(out, "0 damaged") || strings.Contains(out, "DAMAGED") {
		t.Fatalf("output:\n%s", out)
	}
	// The store's "jetstream" directory itself is accepted too.
	if code, out, _ := runCmd("verify", filepath.Join(root, "jetstream")); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestVerifyReportsDamagedRecord(t *testing.T) {
	root, stream := makeStore(t)
	seg := filepath.Join(stream, "msgs", segment.FileName(1, false))
	off := recordOffset(t, seg, 3)
	flipByte(t, seg, off+40) // inside the subject of sequence 3
	code, out, _ := runCmd("verify", root)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	want := fmt.Sprintf("DAMAGED %s: offset %d: ", seg, off)
	if !strings.Contains(out, want) || !strings.Contains(out, "sequences 3-3") {
		t.Fatalf("want a line starting %q naming sequences 3-3:\n%s", want, out)
	}
}

func TestVerifyReportsMetaCheckpointAndConsumer(t *testing.T) {
	root, stream := makeStore(t)
	if err := os.WriteFile(filepath.Join(stream, "meta.sum"), []byte("0000000000000000"), 0o644); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(stream, "msgs", "index.ckpt")
	flipByte(t, ckpt, 20)
	flipByte(t, filepath.Join(stream, "obs", "worker", "state.dat"), 22)
	code, out, _ := runCmd("verify", root)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, re := range []string{
		`DAMAGED .*meta\.sum: offset 0: checksum`,
		`DAMAGED index checkpoint .*index\.ckpt: offset \d+`,
		`DAMAGED .*worker.*state\.dat.*offset`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", re, out)
		}
	}
}

func TestVerifyUsage(t *testing.T) {
	if code, _, _ := runCmd("verify"); code != 2 {
		t.Fatalf("no argument: exit %d", code)
	}
	if code, _, errs := runCmd("verify", t.TempDir()); code != 2 || !strings.Contains(errs, "no jetstream") {
		t.Fatalf("not a store: exit %d %s", code, errs)
	}
}

func TestDumpSegment(t *testing.T) {
	_, stream := makeStore(t)
	seg := filepath.Join(stream, "msgs", segment.FileName(1, false))
	code, out, errs := runCmd("dump", seg)
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	// offset, seq 1, a time, header and data sizes, a checksum, the subject.
	line := regexp.MustCompile(`(?m)^32\s+1\s+\S+Z\s+18\s+150\s+[0-9a-f]{16}\s+"orders\.0"$`)
	if !line.MatchString(out) || !strings.Contains(out, "0 damaged ranges") {
		t.Fatalf("output:\n%s", out)
	}
	off := recordOffset(t, seg, 2)
	flipByte(t, seg, off+100)
	code, out, _ = runCmd("dump", seg)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("DAMAGED %s: offset %d: ", seg, off)) {
		t.Fatalf("exit %d on a damaged segment:\n%s", code, out)
	}
}

// TestVerifyReportsMissingSegment: a sealed segment deleted from the middle
// of a stream leaves a gap no delete explains; verify reports it as damage
// (it used to exit 0 while the server silently served fewer messages).
func TestVerifyReportsMissingSegment(t *testing.T) {
	root, stream := makeStore(t)
	segs, err := filepath.Glob(filepath.Join(stream, "msgs", "*.seg"))
	if err != nil || len(segs) < 3 {
		t.Fatalf("want at least 3 segments: %v %v", segs, err)
	}
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("verify", root)
	if code != 1 || !strings.Contains(out, "DAMAGED "+segs[2]) || !strings.Contains(out, "missing before this segment") {
		t.Fatalf("exit %d, want 1 with the gap before %s reported:\n%s", code, segs[2], out)
	}
}

// TestOneArgCommandsUsage: verify and dump take exactly one operand; -h
// prints the usage and exits 0, a wrong count prints it and exits 2.
func TestOneArgCommandsUsage(t *testing.T) {
	for name, run := range map[string]func(context.Context, []string, io.Writer, io.Writer) int{"verify": runVerify, "dump": runDump} {
		for _, c := range []struct {
			args []string
			code int
		}{{nil, 2}, {[]string{"a", "b"}, 2}, {[]string{"-h"}, 0}, {[]string{"-x", "a"}, 2}} {
			var out, errb bytes.Buffer
			if code := run(context.Background(), c.args, &out, &errb); code != c.code {
				t.Errorf("%s %q: exit %d, want %d", name, c.args, code, c.code)
			}
			if !strings.Contains(errb.String(), "usage: jetwal "+name) {
				t.Errorf("%s %q: no usage on stderr: %q", name, c.args, errb.String())
			}
		}
	}
}
