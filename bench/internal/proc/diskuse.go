package proc

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
)

// DiskUsage sums the disk blocks allocated to everything under dir, files
// and directories, as du does: what the store costs on disk, whether its
// files are preallocated, sparse or small.
func DiskUsage(dir string) (Bytes, error) {
	var total Bytes
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += Bytes(st.Blocks * 512)
		} else {
			total += Bytes(info.Size())
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("proc: disk usage of %s: %w", dir, err)
	}
	return total, nil
}
