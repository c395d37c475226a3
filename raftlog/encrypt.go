package raftlog

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/segment"
)

// Encryption at rest (Options.Encryption; doc.go, "Encryption", says what
// is sealed and what is not). The key file is handled as package wal
// handles a stream's (wal/encrypt.go), and Open decides from the
// directory, never from the configuration alone:
//
//   - key file present, key configured: the file must open with Key or
//     PrevKey. With PrevKey it is written again wrapped by Key (temp file,
//     fsync, rename, directory fsync: a crash leaves the old or the new
//     file, and either opens with one of the two keys). Neither opens it:
//     Open fails with an error naming the directory and wrapping
//     ErrKeyMismatch, having changed nothing.
//   - key file present, no key configured: Open fails the same way.
//   - no key file, key configured, a new log (no segment file): a data key
//     is drawn and the key file written before the first segment.
//   - no key file, key configured, segments written in the clear: the log
//     stays in the clear, PlainWithKey reports it and Encrypted is false,
//     for the caller to say so.
//   - no key file, no key: the plain log of old.
//
// A segment whose encrypted flag disagrees with the key file refuses the
// store with an error naming the file; nothing is cut or removed.

// KeyFile is the name of an encrypted log's key file: its data key wrapped
// by the configured key (package crypt's key file format).
const KeyFile = "key.jwk"

// ErrKeyMismatch is wrapped by Open's error when the configured keys do not
// open the log's key file, or the log is encrypted and no key is
// configured.
var ErrKeyMismatch = crypt.ErrKeyMismatch

// openKey opens, creates or rewraps the key file (see above); s.key is the
// data key when the log is encrypted. It runs before recovery, so that a
// refusal leaves every file as it was.
func (s *Store) openKey() error {
	cfg := s.opts.Encryption
	path := s.path(KeyFile)
	_, statErr := s.fs.Stat(path)
	switch {
	case statErr == nil && !cfg.Enabled():
		return fmt.Errorf("raftlog: %s: the raft log is encrypted (%s) and no encryption key is configured: %w", s.dir, KeyFile, ErrKeyMismatch)
	case statErr == nil:
		dk, rewrap, err := crypt.ReadKeyFile(s.fs, path, cfg)
		if err != nil {
			if errors.Is(err, crypt.ErrKeyMismatch) {
				return fmt.Errorf("raftlog: %s: the encryption key does not match (neither key nor prev_key opens %s): %w", s.dir, KeyFile, ErrKeyMismatch)
			}
			return fmt.Errorf("raftlog: %s: %w", s.dir, err)
		}
		if rewrap {
			if err := crypt.WriteKeyFile(s.fs, path, dk, cfg.Key); err != nil {
				return fmt.Errorf("raftlog: %s: rewrap the data key with the new key: %w", s.dir, err)
			}
			s.rewrapped = true
		}
		s.key = dk
		return nil
	case !errors.Is(statErr, fs.ErrNotExist):
		return fmt.Errorf("raftlog: %s: %w", s.dir, statErr)
	case !cfg.Enabled():
		return nil
	}
	names, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("raftlog: list %s: %w", s.dir, err)
	}
	if len(segmentBases(names)) > 0 {
		s.plainWithKey = true
		return nil
	}
	dk, err := cfg.NewKey()
	if err != nil {
		return fmt.Errorf("raftlog: %s: %w", s.dir, err)
	}
	if err := crypt.WriteKeyFile(s.fs, path, dk, cfg.Key); err != nil {
		return fmt.Errorf("raftlog: %s: %w", s.dir, err)
	}
	s.key = dk
	return nil
}

// checkSegmentKey refuses a segment whose encryption disagrees with the
// log's. The error does not wrap ErrCorrupt and nothing is changed: the
// right key file or configuration brings the log back.
func (s *Store) checkSegmentKey(ss *segment.Segment) error {
	switch {
	case ss.Encrypted() && s.key == nil:
		return fmt.Errorf("raftlog: %s: segment %s is encrypted but the log has no key file (%s): %w", s.dir, ss.Path(), KeyFile, ErrKeyMismatch)
	case !ss.Encrypted() && s.key != nil:
		return fmt.Errorf("raftlog: %s: segment %s is not encrypted but the log has a key file (%s): refusing to mix", s.dir, ss.Path(), KeyFile)
	}
	return nil
}

// Encrypted reports whether the store seals what it writes.
func (s *Store) Encrypted() bool { return s.key != nil }

// PlainWithKey reports that a key is configured but the log was written
// in the clear before it was, so it stays in the clear (see above).
func (s *Store) PlainWithKey() bool { return s.plainWithKey }

// Rewrapped reports that Open found the key file wrapped by PrevKey and
// wrote it again wrapped by Key.
func (s *Store) Rewrapped() bool { return s.rewrapped }

// recordSize is the stored size of entry e's record.
func (s *Store) recordSize(e *Entry) int64 {
	if s.key != nil {
		return int64(segment.SealedSize(0, entryHeader+4+len(e.Extensions), len(e.Data)))
	}
	return recordSize(e)
}

// authFailure reports whether d is a record whose checksum holds but whose
// tag does not open (package segment's reason for it). A torn write never
// leaves that: the checksum covers every stored byte.
func authFailure(d *segment.Damage) bool {
	return d != nil && d.Err != nil && strings.HasPrefix(d.Err.Reason, "record authentication failed")
}
