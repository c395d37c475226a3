package main

// jetwal verify: an offline check of a store directory.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

func verifyCommand() command {
	return command{
		summary: "check every segment, index checkpoint and consumer state of a store",
		run:     runVerify,
	}
}

// verifier collects what one run found.
type verifier struct {
	out     io.Writer
	fs      vfs.FS
	damaged int
	notes   int
}

func (v *verifier) damage(format string, args ...any) {
	v.damaged++
	fmt.Fprintf(v.out, "DAMAGED "+format+"\n", args...)
}

func (v *verifier) note(format string, args ...any) {
	v.notes++
	fmt.Fprintf(v.out, "note    "+format+"\n", args...)
}

func runVerify(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("verify", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: jetwal verify <store_dir>\n\n"+
			"Checks, without changing anything, every stream under <store_dir>/jetstream/$G/streams:\n"+
			"meta.inf against meta.sum, every record checksum of every segment in msgs/,\n"+
			"msgs/index.ckpt, and the consumer state in obs/. Prints each damage with its file,\n"+
			"byte offset and the sequences it covers; exits 1 if anything is damaged.\n"+
			"A directory holding raftlog.meta is checked as a raft log store (package raftlog).\n")
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return 2
	}
	if raftlog.IsStore(vfs.Default, fl.Arg(0)) {
		return verifyRaft(vfs.Default, fl.Arg(0), stdout, stderr)
	}
	root, err := streamsRoot(vfs.Default, fl.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "jetwal verify: %v\n", err)
		return 2
	}
	v := &verifier{out: stdout, fs: vfs.Default}
	names, err := v.fs.ReadDir(root)
	if err != nil {
		fmt.Fprintf(stderr, "jetwal verify: %v\n", err)
		return 2
	}
	streams := 0
	for _, n := range names {
		p := filepath.Join(root, n)
		if strings.HasPrefix(n, ".") {
			continue // a create or delete in progress; removed at start
		}
		if fi, err := v.fs.Stat(p); err != nil || !fi.IsDir {
			continue
		}
		streams++
		v.stream(p)
	}
	fmt.Fprintf(stdout, "%d streams checked in %s: %d damaged, %d notes\n", streams, root, v.damaged, v.notes)
	if v.damaged > 0 {
		return 1
	}
	return 0
}

// streamsRoot finds the streams directory: <dir>/jetstream/$G/streams, or
// <dir>/$G/streams when dir is the "jetstream" directory itself.
func streamsRoot(fs vfs.FS, dir string) (string, error) {
	for _, p := range []string{
		filepath.Join(dir, "jetstream", "$G", "streams"),
		filepath.Join(dir, "$G", "streams"),
	} {
		if fi, err := fs.Stat(p); err == nil && fi.IsDir {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: no jetstream/$G/streams directory", dir)
}

func (v *verifier) stream(dir string) {
	fmt.Fprintf(v.out, "stream %s\n", filepath.Base(dir))
	v.meta(dir)
	msgs := filepath.Join(dir, "msgs")
	if fi, err := v.fs.Stat(msgs); err != nil || !fi.IsDir {
		v.damage("%s: missing", msgs)
	} else {
		v.segments(msgs)
		v.checkpoint(filepath.Join(msgs, "index.ckpt"))
	}
	obs := filepath.Join(dir, "obs")
	if fi, err := v.fs.Stat(obs); err == nil && fi.IsDir {
		if err := consumerstate.Check(obs, v.fs); err != nil {
			for _, e := range splitJoined(err) {
				v.damage("%v", e)
			}
		}
	}
}

// splitJoined undoes errors.Join so each problem prints on its own line.
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitJoined(e)...)
		}
		return out
	}
	return []error{err}
}

func (v *verifier) meta(dir string) {
	inf, sum := filepath.Join(dir, "meta.inf"), filepath.Join(dir, "meta.sum")
	b, err := os.ReadFile(inf)
	if err != nil {
		v.damage("%s: %v", inf, err)
		return
	}
	s, err := os.ReadFile(sum)
	if err != nil {
		v.damage("%s: %v", sum, err)
		return
	}
	want := fmt.Sprintf("%016x", xxhash.Sum64(b))
	if got := strings.TrimSpace(string(s)); got != want {
		if p, err := os.ReadFile(sum + ".tmp"); err == nil && strings.TrimSpace(string(p)) == want {
			v.note("%s: update in progress (%s holds the new checksum; the server completes it)", sum, sum+".tmp")
			return
		}
		v.damage("%s: offset 0: checksum %q does not match %s (computed %s)", sum, got, inf, want)
	}
}

type segName struct {
	base uint64
	path string
}

func listSegmentFiles(fs vfs.FS, dir string) ([]segName, error) {
	names, err := fs.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []segName
	for _, n := range names {
		num, ok := strings.CutSuffix(n, segment.SuffixCompressed)
		if !ok {
			num, ok = strings.CutSuffix(n, segment.SuffixPlain)
		}
		if !ok {
			continue
		}
		base, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, segName{base: base, path: filepath.Join(dir, n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].base < out[j].base })
	return out, nil
}

func (v *verifier) segments(dir string) {
	files, err := listSegmentFiles(v.fs, dir)
	if err != nil {
		v.damage("%s: %v", dir, err)
		return
	}
	var end uint64      // last sequence the segments so far account for
	var newestEnd int64 // bytes of valid records in the newest segment
	for i, f := range files {
		var next uint64 // first sequence of the next segment, 0 if none
		if i+1 < len(files) {
			next = files[i+1].base
		}
		if i > 0 && f.base > end+1 {
			// Segments follow each other without gaps and only the oldest
			// are removed whole: a gap is a segment file lost.
			v.damage("%s: sequences %d-%d missing before this segment: no segment file holds them", f.path, end+1, f.base-1)
		}
		last, bytes := v.segment(f, i == len(files)-1, next)
		end, newestEnd = max(last, f.base-1), bytes
	}
	v.againstCheckpoint(dir, files, end, newestEnd)
}

// againstCheckpoint compares the segments with what the store's checkpoint
// recorded as durable (the server does the same at open).
func (v *verifier) againstCheckpoint(dir string, files []segName, end uint64, newestEnd int64) {
	c, err := wal.ReadCheckpoint(v.fs, dir)
	if err != nil || c == nil || len(files) == 0 {
		return // a damaged checkpoint is reported by checkpoint()
	}
	if c.Last > end {
		v.damage("%s: the checkpoint recorded sequences up to %d, the segments end at %d", files[len(files)-1].path, c.Last, end)
	}
	// A missing head is provably a loss only when nothing was written
	// after the checkpoint (else a purge whose tombstones went with the
	// removed segments may explain it).
	newest := files[len(files)-1]
	if newest.base == c.Bases[len(c.Bases)-1] && newestEnd == c.Covered {
		if n, a, b := c.LiveBefore(files[0].base); n > 0 {
			v.damage("%s: %d messages (sequences %d-%d) missing before the first segment: the checkpoint had them", files[0].path, n, a, b)
		}
	}
}

// segment scans one segment file and reports each damaged range with the
// sequences it covers: from one past the last good message before it to one
// before the first good message after it (or the next segment's base).
func (v *verifier) segment(f segName, newest bool, next uint64) (last uint64, end int64) {
	seg, err := segment.Open(v.fs, f.path, false)
	if err != nil {
		v.damage("%v (sequences from %d)", err, f.base)
		if next > 0 {
			return next - 1, -1 // reported here; not a gap as well
		}
		return f.base - 1, -1
	}
	defer seg.Close()
	last = f.base - 1
	var pending []segment.Damage // damage waiting for the next good message
	var ranges []string
	flushPending := func(upTo uint64, known bool) {
		for _, d := range pending {
			seqs := fmt.Sprintf("sequences %d and later", last+1)
			if known && upTo > last {
				seqs = fmt.Sprintf("sequences %d-%d", last+1, upTo)
			} else if known {
				seqs = "no sequence (between records)"
			}
			ranges = append(ranges, fmt.Sprintf("%v; %s", d.Err, seqs))
		}
		pending = pending[:0]
	}
	var records int
	res, err := seg.ScanDamage(segment.HeaderSize, 0, func(_ int64, r *segment.Record) error {
		records++
		if r.Tombstone() {
			if end := r.Seq + r.TombstoneCount(); end-1 > last {
				last = end - 1
			}
			return nil
		}
		if len(pending) > 0 {
			flushPending(r.Seq-1, true)
		}
		last = r.Seq
		return nil
	}, func(d segment.Damage) {
		if newest && d.Resync < 0 {
			v.note("%s: offset %d: torn tail after sequence %d (%s); a crash mid-write leaves this, the server cuts it off",
				f.path, d.Offset, last, d.Err.Reason)
			return
		}
		pending = append(pending, d)
	})
	if err != nil {
		v.damage("%v (sequences %d and later in this file)", err, f.base)
		if next > 0 {
			return max(last, next-1), -1
		}
		return last, -1
	}
	if len(pending) > 0 {
		flushPending(next-1, next > 0)
		if next > 0 {
			last = max(last, next-1) // reported as damage: not a gap too
		}
	}
	for _, r := range ranges {
		v.damage("%s", r)
	}
	fmt.Fprintf(v.out, "  %s: %d records, last sequence %d\n", filepath.Base(f.path), records, last)
	return last, res.End
}

func (v *verifier) checkpoint(path string) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return // none yet: the server scans the segments
	}
	if err != nil {
		v.damage("%s: %v", path, err)
		return
	}
	if _, _, err := index.Decode(path, b); err != nil {
		// A bad checkpoint loses nothing (the server rescans) but is damage.
		v.damage("%v", err)
	}
}
