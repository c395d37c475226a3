package raftlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// Report is what Check found in a store directory.
type Report struct {
	Segments int
	// First and Last are the index range Open would serve (0 when empty or
	// when damage makes it unknown).
	First, Last uint64
	// Damage lists problems that lose or hide acknowledged data, each naming
	// a file and a byte offset. Open refuses or GetEntry fails on them.
	Damage []string
	// Notes lists conditions a crash leaves and Open repairs: a torn tail of
	// the newest segment, a missing or stale offset index, files below the
	// first index not yet removed, a temporary file.
	Notes []string
	// Encrypted is set when the log has a key file. Check verifies its
	// structure and every record's checksum without the key; CheckKey also
	// opens every record (tags).
	Encrypted bool
	// TagsChecked is set by CheckKey once the key file opened: every
	// record's tag was verified.
	TagsChecked bool
}

// OK reports whether nothing is damaged.
func (r *Report) OK() bool { return len(r.Damage) == 0 }

func (r *Report) damage(format string, args ...any) {
	r.Damage = append(r.Damage, fmt.Sprintf(format, args...))
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Check reads every file of the store in dir, without changing anything,
// and reports damage: the meta and stable files' checksums, every record's
// checksum and index in every segment, the offset index files against the
// records, and holes between segments. The store should not be open for
// writing while Check runs. The error is for a directory Check cannot read.
func Check(fs vfs.FS, dir string) (*Report, error) {
	return check(fs, dir, nil)
}

// CheckKey is Check that also opens every record of an encrypted log with
// the data key in its key file, unwrapped by cfg.Key or cfg.PrevKey (the
// key file is not rewritten): a record whose tag fails is damage. A key
// file that neither key opens is an error wrapping ErrKeyMismatch. On a
// log in the clear it is Check.
func CheckKey(fs vfs.FS, dir string, cfg crypt.Config) (*Report, error) {
	if fs == nil {
		fs = vfs.Default
	}
	path := filepath.Join(dir, KeyFile)
	if _, err := fs.Stat(path); errors.Is(err, os.ErrNotExist) || !cfg.Enabled() {
		return check(fs, dir, nil)
	}
	dk, _, err := crypt.ReadKeyFile(fs, path, cfg)
	if err != nil {
		return nil, fmt.Errorf("raftlog: %s: %w", dir, err)
	}
	return check(fs, dir, dk)
}

func check(fs vfs.FS, dir string, key *crypt.DataKey) (*Report, error) {
	if fs == nil {
		fs = vfs.Default
	}
	names, err := fs.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("raftlog: list %s: %w", dir, err)
	}
	r := &Report{TagsChecked: key != nil}
	keyPath := filepath.Join(dir, KeyFile)
	if _, err := crypt.CheckKeyFile(fs, keyPath); err == nil {
		r.Encrypted = true
	} else if !errors.Is(err, os.ErrNotExist) {
		r.Encrypted = true
		r.damage("%v", err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			r.note("%s: interrupted atomic write, removed on open", filepath.Join(dir, n))
		}
	}
	var metaFirst uint64
	metaPath := filepath.Join(dir, MetaFile)
	bases := segmentBases(names)
	if b, err := readFile(fs, metaPath); errors.Is(err, os.ErrNotExist) && len(bases) == 0 {
		r.note("%s: missing and no segments: a store whose creation never finished", metaPath)
	} else if err != nil {
		r.damage("%s: offset 0: %v", metaPath, err)
	} else if p, err := checkSlots(metaPath, slotKindMeta, b, r); err == nil {
		if metaFirst, err = decodeMeta(metaPath, p); err != nil {
			r.damage("%v", err)
		}
	}
	stablePath := filepath.Join(dir, StableFile)
	if b, err := readFile(fs, stablePath); err == nil {
		if p, err := checkSlots(stablePath, slotKindStable, b, r); err == nil {
			if _, err := decodeStable(stablePath, p); err != nil {
				r.damage("%v", err)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		r.damage("%s: offset 0: %v", stablePath, err)
	}
	r.Segments = len(bases)
	counts := make([]uint64, len(bases))
	ok := true
	for i, base := range bases {
		n, good := checkSegment(fs, dir, base, i == len(bases)-1, key, r)
		counts[i], ok = n, ok && good
	}
	if !ok || len(bases) == 0 {
		return r, nil
	}
	for i := 0; i+1 < len(bases); i++ {
		if counts[i] < bases[i+1]-bases[i] {
			r.damage("%s: offset 0: holds indexes %d-%d but the next segment starts at %d: indexes %d-%d are missing",
				filepath.Join(dir, segment.FileName(bases[i], false)), bases[i], bases[i]+counts[i]-1, bases[i+1],
				bases[i]+counts[i], bases[i+1]-1)
		}
	}
	n := len(bases)
	last := uint64(0)
	if counts[n-1] > 0 {
		last = bases[n-1] + counts[n-1] - 1
	} else if n > 1 {
		last = bases[n-1] - 1
	}
	first := max(metaFirst, bases[0])
	if last != 0 && first <= last {
		r.First, r.Last = first, last
	}
	for i := 0; i+1 < n; i++ {
		if bases[i+1] <= first {
			r.note("%s: wholly below first index %d, removed on open", filepath.Join(dir, segment.FileName(bases[i], false)), first)
		}
	}
	return r, nil
}

// checkSegment scans one segment and its index file into r. It returns the
// number of records before any damage and whether the segment is usable.
func checkSegment(fs vfs.FS, dir string, base uint64, newest bool, key *crypt.DataKey, r *Report) (uint64, bool) {
	path := filepath.Join(dir, segment.FileName(base, false))
	ss, err := segment.OpenKey(fs, path, false, key)
	if err != nil {
		if fi, serr := fs.Stat(path); newest && serr == nil && fi.Size < segment.HeaderSize {
			r.note("%s: newest segment created but its header never synced; removed on open", path)
			return 0, true
		}
		r.damage("%v", err)
		return 0, false
	}
	defer ss.Close()
	if ss.Base() != base {
		r.damage("%s: offset 8: header base %d does not match the file name", path, ss.Base())
		return 0, false
	}
	switch {
	case ss.Encrypted() && !r.Encrypted:
		r.damage("%s: offset 0: segment is encrypted but the log has no key file (%s); Open refuses it", path, KeyFile)
		return 0, false
	case !ss.Encrypted() && r.Encrypted:
		r.damage("%s: offset 0: segment is not encrypted but the log has a key file (%s); Open refuses it", path, KeyFile)
		return 0, false
	}
	var offs []uint32
	good := true
	damaged := false // damage seen since the last good record
	_, err = ss.ScanDamage(segment.HeaderSize, 0, func(off int64, rec *segment.Record) error {
		want := base + uint64(len(offs))
		if damaged && !rec.Tombstone() && rec.Seq > want {
			r.damage("%s: offset %d: indexes %d-%d lost to the damage before this record", path, off, want, rec.Seq-1)
			for ; want < rec.Seq; want++ {
				offs = append(offs, 0)
			}
		}
		damaged = false
		if rec.Tombstone() || rec.Seq != want {
			return corrupt(path, off, "record holds index %d (tombstone %v), expected %d", rec.Seq, rec.Tombstone(), want)
		}
		offs = append(offs, uint32(off))
		return nil
	}, func(d segment.Damage) {
		if newest && d.Resync < 0 && !authFailure(&d) {
			r.note("%s: offset %d: torn tail after index %d (%s); a crash mid-write leaves this, Open cuts it off",
				path, d.Offset, base+uint64(len(offs))-1, d.Err.Reason)
			return
		}
		r.damage("%v (after index %d)", d.Err, base+uint64(len(offs))-1)
		damaged, good = true, false
	})
	if err != nil {
		r.damage("%v", err)
		return uint64(len(offs)), false
	}
	idx := strings.TrimSuffix(path, segment.SuffixPlain) + IndexSuffix
	b, err := readFile(fs, idx)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !newest {
			r.note("%s: missing; rebuilt on open", idx)
		}
	case err != nil:
		r.damage("%s: offset 0: %v", idx, err)
	default:
		got, err := decodeIndex(idx, b, base, ss.End(), ss.Created())
		if err != nil {
			r.note("%v; rebuilt on open", err)
			break
		}
		if len(got) != len(offs) {
			r.damage("%s: offset 24: lists %d records, segment holds %d", idx, len(got), len(offs))
			break
		}
		for i := range got {
			if got[i] != offs[i] {
				r.damage("%s: offset %d: record %d at offset %d, segment has it at %d", idx, indexHeaderSize+4*i, i, got[i], offs[i])
				break
			}
		}
	}
	return uint64(len(offs)), good
}

// checkSlots decodes a slot file into r: damage when no slot holds a value,
// a note when the older slot is torn (a crash during an update leaves that).
func checkSlots(path string, kind byte, b []byte, r *Report) ([]byte, error) {
	p, _, cur, size, err := decodeSlots(path, kind, b)
	if err != nil {
		r.damage("%v", err)
		return nil, err
	}
	other := 1 - cur
	if _, _, err := decodeSlot(path, int64(other)*size, kind, b[int64(other)*size:int64(other+1)*size]); err != nil {
		r.note("%v; the other slot holds the current value", err)
	}
	return p, nil
}
