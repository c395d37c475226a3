package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

// The stream's data key for the files a store's owner keeps beside it.
//
// A JetStream stream is more than its store: its metadata, consumer state
// and sidecar files sit in the stream's directory, and must be sealed with
// the stream's one data key, the store's (package jetstream's doc.go says
// why one key). The metadata must be opened before the store is (it holds
// the store's options), so the key file can be read on its own (ReadKey),
// and written by whoever builds a new stream directory (KeyFileName,
// crypt.MarshalKey) before the store first opens it.

// KeyFileName is the name of an encrypted store's key file in its directory.
const KeyFileName = keyFile

// ReadKey opens the key file of the store directory dir with cfg (Key, or
// else PrevKey), changing nothing: a rewrap with the new key is Open's. It
// returns nil and no error when dir has no key file (a plain store, or
// none yet). A key file that opens with neither key, or a key file with no
// key configured, is an error naming dir that wraps ErrKeyMismatch; a
// damaged one wraps crypt.ErrCorrupt.
func ReadKey(fsys vfs.FS, dir string, cfg crypt.Config) (*crypt.DataKey, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	path := filepath.Join(dir, keyFile)
	if _, err := fsys.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("wal: %s: %w", dir, err)
	}
	if !cfg.Enabled() {
		return nil, fmt.Errorf("wal: %s: the stream is encrypted (%s) and no encryption key is configured: %w", dir, keyFile, ErrKeyMismatch)
	}
	dk, _, err := crypt.ReadKeyFile(fsys, path, cfg)
	if err != nil {
		if errors.Is(err, crypt.ErrKeyMismatch) {
			return nil, fmt.Errorf("wal: %s: the encryption key does not match (neither key nor prev_key opens %s): %w", dir, keyFile, ErrKeyMismatch)
		}
		return nil, fmt.Errorf("wal: %s: %w", dir, err)
	}
	return dk, nil
}

// DataKey is the store's data key, nil when the store is plain. The owner
// of the store may open values with it and seal its own files under it in
// sessions of its own (crypt.DataKey.NewSession); associated data naming
// each file's kind keeps them apart from the store's records.
func (s *Store) DataKey() *crypt.DataKey { return s.key }
