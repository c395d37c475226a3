package vfs

import (
	"fmt"
	"os"
	"path/filepath"
)

// MkdirAllSync is MkdirAll made durable: it creates dir and any missing
// parents, then syncs the parent of each directory it created, so that a
// power loss cannot take away a directory (and everything written in it)
// whose entry was never synced.
func MkdirAllSync(fs FS, dir string, perm os.FileMode) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := fs.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		parent := filepath.Dir(missing[i])
		if parent == missing[i] {
			continue
		}
		if err := fs.SyncDir(parent); err != nil {
			return fmt.Errorf("vfs: sync %s: %w", parent, err)
		}
	}
	return nil
}
