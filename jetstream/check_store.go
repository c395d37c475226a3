package jetstream

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// CheckKind says what a StoreFinding is.
type CheckKind uint8

const (
	// CheckStream starts a stream's findings; Text is its directory name.
	CheckStream CheckKind = iota
	// CheckSummary describes a file (a segment's records, say).
	CheckSummary
	// CheckNote is something a crash leaves and the next start repairs.
	CheckNote
	// CheckDamage is a loss or a damaged file.
	CheckDamage
	// CheckWrongKey is a stream the key does not open: its records were
	// not checked (not damage).
	CheckWrongKey
)

// StoreFinding is one line of a CheckStore report.
type StoreFinding struct {
	Kind CheckKind
	Text string
}

// StoreReport is what CheckStore found, in the order it found it.
type StoreReport struct {
	Streams  int
	Findings []StoreFinding
	// Damaged, Notes and WrongKey count the findings of those kinds.
	Damaged, Notes, WrongKey int
}

func (r *StoreReport) add(k CheckKind, format string, args ...any) {
	r.Findings = append(r.Findings, StoreFinding{Kind: k, Text: fmt.Sprintf(format, args...)})
	switch k {
	case CheckDamage:
		r.Damaged++
	case CheckNote:
		r.Notes++
	case CheckWrongKey:
		r.WrongKey++
	}
}

// CheckStore checks, without changing anything, every stream of every
// account of the store in dir (see StreamDirs): each by the package that
// owns the format — meta.inf here (CheckStreamMeta), msgs/ by wal and obs/
// by consumerstate. With a key (key.Enabled), encrypted records'
// authentication tags are checked too. The error is for a directory that
// is not a store.
func CheckStore(fsys vfs.FS, dir string, key crypt.Config) (*StoreReport, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	dirs, err := StreamDirs(fsys, dir)
	if err != nil {
		return nil, err
	}
	r := &StoreReport{Streams: len(dirs)}
	for _, d := range dirs {
		r.stream(fsys, d, key)
	}
	return r, nil
}

// stream checks one stream directory.
func (r *StoreReport) stream(fsys vfs.FS, dir string, key crypt.Config) {
	r.add(CheckStream, "%s", filepath.Base(dir))
	if note, err := CheckStreamMeta(fsys, dir); err != nil {
		r.add(CheckDamage, "%v", err)
	} else if note != "" {
		r.add(CheckNote, "%s", note)
	}
	msgs := filepath.Join(dir, "msgs")
	if fi, err := fsys.Stat(msgs); err != nil || !fi.IsDir {
		r.add(CheckDamage, "%s: missing", msgs)
	} else if rep, err := wal.CheckKey(fsys, msgs, key); err != nil {
		r.keyOrDamage(err)
	} else {
		for _, f := range rep.Findings {
			switch f.Kind {
			case wal.Damage:
				r.add(CheckDamage, "%s", f.Text)
			case wal.Note:
				r.add(CheckNote, "%s", f.Text)
			default:
				r.add(CheckSummary, "%s", f.Text)
			}
		}
	}
	obs := filepath.Join(dir, "obs")
	if fi, err := fsys.Stat(obs); err == nil && fi.IsDir {
		// With a key, the consumers' sealed records are opened with the
		// stream's data key (held in msgs/, wrapped by the key).
		var dk *crypt.DataKey
		if key.Enabled() {
			if dk, err = wal.ReadKey(fsys, msgs, key); err != nil {
				r.keyOrDamage(err)
				return
			}
		}
		if err := consumerstate.CheckKey(obs, fsys, dk); err != nil {
			for _, e := range splitJoined(err) {
				r.add(CheckDamage, "%v", e)
			}
		}
	}
}

// keyOrDamage sorts an error of a check: a key that does not open the
// stream is not damage.
func (r *StoreReport) keyOrDamage(err error) {
	if errors.Is(err, wal.ErrKeyMismatch) {
		r.add(CheckWrongKey, "%v", err)
		return
	}
	r.add(CheckDamage, "%v", err)
}

// splitJoined undoes errors.Join so each problem is a finding of its own.
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
