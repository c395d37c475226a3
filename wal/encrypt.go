package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/segment"
)

// Encryption at rest (Options.Encryption; package crypt draws the key file
// and the nonce scheme, package segment the sealed record, package index
// the sealed subject section).
//
// An encrypted store has a key file, <dir>/key.jwk, holding the stream's
// random data key wrapped by the configured key. Its segments carry the
// encrypted flag and seal every record's subject, header and payload
// (tombstones too); its checkpoints seal their subject section. Sequences,
// timestamps, flags and lengths stay clear (segment/doc.go says why).
//
// Open decides from the directory, never from the configuration alone:
//
//   - key file present, key configured: the file must open with Key or
//     PrevKey. With PrevKey it is written again wrapped by Key (temp file,
//     fsync, rename, directory fsync: a crash leaves the old or the new
//     file, and either opens with one of the two keys). Neither opens it:
//     Open fails with an error naming the directory and wrapping
//     crypt.ErrKeyMismatch, having changed nothing.
//   - key file present, no key configured: Open fails the same way.
//   - no key file, key configured, a new store (no segment file): a data
//     key is drawn and the key file written before the first segment.
//   - no key file, key configured, segments written in the clear: the
//     store stays in the clear. RecoveryReport.PlainWithKey is set and
//     Encrypted reports false, for the caller to say so loudly. nats-server
//     converts such a stream's blocks when a key is added; jetwal does not
//     yet (a conversion rewrites every segment and the checkpoint).
//   - no key file, no key: the plain store of old.
//
// A segment whose encrypted flag disagrees with the key file (an encrypted
// segment without a key file, a plain one beside a key file) refuses the
// store with an error naming the file: nothing is set aside or removed, so
// the right key file or configuration brings it back. A record whose tag
// fails is damage, exactly as a checksum failure (recover.go).

// keyFile is the name of an encrypted store's key file.
const keyFile = "key.jwk"

// ErrKeyMismatch is wrapped by Open's error when the configured keys do not
// open the store's key file, or the store is encrypted and no key is
// configured.
var ErrKeyMismatch = crypt.ErrKeyMismatch

// openKey opens, creates or rewraps the key file (see above); s.key is
// the data key when the store is encrypted.
func (s *Store) openKey() error {
	cfg := s.opts.Encryption
	path := filepath.Join(s.dir, keyFile)
	_, statErr := s.fs.Stat(path)
	s.fs.Remove(path + ".tmp") // an interrupted rewrap: the key file is whole
	switch {
	case statErr == nil && !cfg.Enabled():
		return fmt.Errorf("wal: %s: the stream is encrypted (%s) and no encryption key is configured: %w", s.dir, keyFile, ErrKeyMismatch)
	case statErr == nil:
		dk, rewrap, err := crypt.ReadKeyFile(s.fs, path, cfg)
		if err != nil {
			if errors.Is(err, crypt.ErrKeyMismatch) {
				return fmt.Errorf("wal: %s: the encryption key does not match (neither key nor prev_key opens %s): %w", s.dir, keyFile, ErrKeyMismatch)
			}
			return fmt.Errorf("wal: %s: %w", s.dir, err)
		}
		if rewrap {
			if err := crypt.WriteKeyFile(s.fs, path, dk, cfg.Key); err != nil {
				return fmt.Errorf("wal: %s: rewrap the data key with the new key: %w", s.dir, err)
			}
			s.report.Rewrapped = true
		}
		s.key = dk
		return nil
	case !errors.Is(statErr, fs.ErrNotExist):
		return fmt.Errorf("wal: %s: %w", s.dir, statErr)
	case !cfg.Enabled():
		return nil
	}
	files, err := segmentFiles(s.fs, s.dir)
	if err != nil {
		return err
	}
	if len(files) > 0 {
		s.report.PlainWithKey = true
		return nil
	}
	dk, err := cfg.NewKey()
	if err != nil {
		return fmt.Errorf("wal: %s: %w", s.dir, err)
	}
	if err := crypt.WriteKeyFile(s.fs, path, dk, cfg.Key); err != nil {
		return fmt.Errorf("wal: %s: %w", s.dir, err)
	}
	s.key = dk
	return nil
}

// checkSegmentKey refuses a segment whose encryption disagrees with the
// store's (see above). The error does not wrap ErrCorrupt: recovery must
// not set the file aside.
func (s *Store) checkSegmentKey(seg *segment.Segment) error {
	switch {
	case seg.Encrypted() && s.key == nil:
		seg.Close()
		return fmt.Errorf("wal: %s: segment %s is encrypted but the stream has no key file (%s): %w", s.dir, seg.Path(), keyFile, ErrKeyMismatch)
	case !seg.Encrypted() && s.key != nil:
		seg.Close()
		return fmt.Errorf("wal: %s: segment %s is not encrypted but the stream has a key file (%s): refusing to mix", s.dir, seg.Path(), keyFile)
	}
	return nil
}

// Encrypted reports whether the store encrypts what it writes.
func (s *Store) Encrypted() bool { return s.key != nil }

// Cipher is the cipher of an encrypted store's data key (crypt.None when
// it stores in the clear).
func (s *Store) Cipher() crypt.Cipher {
	if s.key == nil {
		return crypt.None
	}
	return s.key.Cipher()
}

// recordSize is the stored size of a record with these parts.
func (s *Store) recordSize(subjectLen, hdrLen, dataLen int) int {
	if s.key != nil {
		return segment.SealedSize(subjectLen, hdrLen, dataLen)
	}
	return segment.EncodedSize(subjectLen, hdrLen, dataLen)
}

// tombReserve is the package constant plus, when encrypted, the sealing
// overhead of its 32 tombstones.
func (s *Store) tombReserve() int {
	if s.key != nil {
		return tombReserve + 32*crypt.Overhead
	}
	return tombReserve
}
