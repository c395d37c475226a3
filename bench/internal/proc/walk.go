package proc

import (
	"io/fs"
	"path/filepath"
)

// walkFiles calls add with the size of every regular file under dir.
func walkFiles(dir string, add func(size int64)) error {
	return filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		add(info.Size())
		return nil
	})
}
