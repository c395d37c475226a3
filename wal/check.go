package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// FindingKind says what a Check finding is.
type FindingKind uint8

const (
	// Summary describes a segment: its records and last sequence.
	Summary FindingKind = iota
	// Note is something a crash leaves and Open repairs (a torn tail).
	Note
	// Damage is a loss or a damaged file.
	Damage
)

// Finding is one line of a Check report; Text names the file and, for
// damage, the byte offset and the sequences it covers.
type Finding struct {
	Kind FindingKind
	Text string
}

// CheckReport is what Check found, in the order it found it.
type CheckReport struct {
	Findings []Finding
	dk       *crypt.DataKey // the store's data key, when given and encrypted
}

// keyFile checks an encrypted store's key file: its structure always, and
// that key opens it when one is given. It returns the data key (nil for a
// plain store or without a key).
func (r *CheckReport) keyFile(fs vfs.FS, dir string, key crypt.Config) (*crypt.DataKey, error) {
	path := filepath.Join(dir, keyFile)
	if _, err := fs.Stat(path); err != nil {
		if key.Enabled() {
			r.add(Summary, "%s: not encrypted (no %s); --key checks nothing more", dir, keyFile)
		}
		return nil, nil
	}
	if !key.Enabled() {
		c, err := crypt.CheckKeyFile(fs, path)
		if err != nil {
			r.add(Damage, "%v", err)
			return nil, nil
		}
		r.add(Note, "%s: encrypted (%s): record checksums checked, their authentication tags need the key (--key)", dir, c)
		return nil, nil
	}
	dk, _, err := crypt.ReadKeyFile(fs, path, key)
	if errors.Is(err, crypt.ErrKeyMismatch) {
		return nil, fmt.Errorf("wal: %s: the key does not open %s: %w", dir, keyFile, ErrKeyMismatch)
	}
	if err != nil {
		r.add(Damage, "%v", err)
		return nil, nil
	}
	r.add(Summary, "%s: encrypted (%s): every record's tag checked", dir, dk.Cipher())
	return dk, nil
}

// Damaged reports whether any finding is damage.
func (r *CheckReport) Damaged() bool {
	for _, f := range r.Findings {
		if f.Kind == Damage {
			return true
		}
	}
	return false
}

func (r *CheckReport) add(kind FindingKind, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Kind: kind, Text: fmt.Sprintf(format, args...)})
}

// Check verifies the store in dir without opening it (Open repairs; Check
// changes nothing): every record checksum of every segment, the sequences
// each damaged range covers, gaps between segments, the index checkpoint,
// and the segments against what the checkpoint recorded as durable. It is
// the checker behind `jetwal verify`; recovery (recover.go) applies the
// same rules when it opens the store.
func Check(fs vfs.FS, dir string) (*CheckReport, error) {
	return CheckKey(fs, dir, crypt.Config{})
}

// CheckKey is Check of a store that may be encrypted. Without a key (the
// zero Config) an encrypted store's structure is checked — its key file,
// every record's checksum over the sealed bytes — and a note says the
// tags were not. With the key (or the previous key) every record's tag is
// checked too, and a record whose tag fails is damage, with its file and
// offset, as recovery would find it. A key that does not open the key
// file is an error wrapping ErrKeyMismatch, not damage.
func CheckKey(fs vfs.FS, dir string, key crypt.Config) (*CheckReport, error) {
	if fs == nil {
		fs = vfs.Default
	}
	files, err := segmentFiles(fs, dir)
	if err != nil {
		return nil, err
	}
	r := &CheckReport{}
	if r.dk, err = r.keyFile(fs, dir, key); err != nil {
		return nil, err
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
			r.add(Damage, "%s: sequences %d-%d missing before this segment: no segment file holds them", f.path, end+1, f.base-1)
		}
		last, bytes := r.segment(fs, f, i == len(files)-1, next)
		end, newestEnd = max(last, f.base-1), bytes
	}
	r.checkpoint(fs, dir)
	r.againstCheckpoint(fs, dir, files, end, newestEnd)
	return r, nil
}

// segment scans one segment file and reports each damaged range with the
// sequences it covers: from one past the last good message before it to one
// before the first good message after it (or the next segment's base).
func (r *CheckReport) segment(fs vfs.FS, f segFile, newest bool, next uint64) (last uint64, end int64) {
	seg, err := segment.OpenKey(fs, f.path, false, r.dk)
	if err != nil {
		r.add(Damage, "%v (sequences from %d)", err, f.base)
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
	res, err := seg.ScanDamage(segment.HeaderSize, 0, func(_ int64, rec *segment.Record) error {
		records++
		if rec.Tombstone() {
			if end := rec.Seq + rec.TombstoneCount(); end-1 > last {
				last = end - 1
			}
			return nil
		}
		if len(pending) > 0 {
			flushPending(rec.Seq-1, true)
		}
		last = rec.Seq
		return nil
	}, func(d segment.Damage) {
		if newest && d.Resync < 0 {
			r.add(Note, "%s: offset %d: torn tail after sequence %d (%s); a crash mid-write leaves this, the server cuts it off",
				f.path, d.Offset, last, d.Err.Reason)
			return
		}
		pending = append(pending, d)
	})
	if err != nil {
		r.add(Damage, "%v (sequences %d and later in this file)", err, f.base)
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
	for _, rg := range ranges {
		r.add(Damage, "%s", rg)
	}
	r.add(Summary, "%s: %d records, last sequence %d", filepath.Base(f.path), records, last)
	return last, res.End
}

// checkpoint reports a checkpoint that does not decode: it loses nothing
// (Open rescans) but is damage.
func (r *CheckReport) checkpoint(fs vfs.FS, dir string) {
	_, err := ReadCheckpoint(fs, dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.add(Damage, "%v", err)
	}
}

// againstCheckpoint compares the segments with what the checkpoint
// recorded as durable (recover.go does the same at open).
func (r *CheckReport) againstCheckpoint(fs vfs.FS, dir string, files []segFile, end uint64, newestEnd int64) {
	c, err := ReadCheckpoint(fs, dir)
	if err != nil || c == nil || len(files) == 0 {
		return
	}
	if c.Last > end {
		r.add(Damage, "%s: the checkpoint recorded sequences up to %d, the segments end at %d", files[len(files)-1].path, c.Last, end)
	}
	// A missing head is provably a loss only when nothing was written
	// after the checkpoint (else a purge whose tombstones went with the
	// removed segments may explain it).
	newest := files[len(files)-1]
	if newest.base == c.Bases[len(c.Bases)-1] && newestEnd == c.Covered {
		if n, a, b := c.LiveBefore(files[0].base); n > 0 {
			r.add(Damage, "%s: %d messages (sequences %d-%d) missing before the first segment: the checkpoint had them", files[0].path, n, a, b)
		}
	}
}
