package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The shape of MeasureDiskWrite's writes: the way jetwal's segments are
// written under sync always, with the group commit of a busy publisher.
const (
	DiskFileSize  = 64 << 20 // one preallocated file, jetwal's segment size
	DiskWriteSize = 1 << 20  // one pwrite
	DiskSyncEvery = 4 << 20  // bytes written between fdatasyncs
)

// MeasureDiskWrite measures how fast the filesystem holding dir takes
// durable writes: total bytes written in 1 MiB pwrites into fresh 64 MiB
// files preallocated with fallocate, with an fdatasync after every 4 MiB
// and at the end of each file. That is how jetwal stores messages when it
// syncs before acknowledging, so the rate bounds what a server can store
// durably here, whatever its CPU cost. It returns MiB per second; the files
// are removed before it returns.
func MeasureDiskWrite(dir string, total int64) (float64, error) {
	if total <= 0 {
		return 0, fmt.Errorf("disk write rate: total %d bytes", total)
	}
	tmp, err := os.MkdirTemp(dir, "diskrate-")
	if err != nil {
		return 0, fmt.Errorf("disk write rate: %w", err)
	}
	defer os.RemoveAll(tmp)
	buf := make([]byte, DiskWriteSize)
	for i := range buf {
		buf[i] = byte(i*7 + i>>8) // not zeros: no layer below may shortcut them
	}
	start := time.Now()
	for n, written := 0, int64(0); written < total; n++ {
		size := min(int64(DiskFileSize), total-written)
		if err := writeSynced(filepath.Join(tmp, fmt.Sprintf("f%d", n)), buf, size); err != nil {
			return 0, fmt.Errorf("disk write rate: %w", err)
		}
		written += size
	}
	return float64(total) / (1 << 20) / time.Since(start).Seconds(), nil
}

// writeSynced creates path, preallocates size bytes and fills them with
// copies of buf, syncing the data every DiskSyncEvery bytes and at the end.
func writeSynced(path string, buf []byte, size int64) (err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if err := preallocate(f, size); err != nil {
		return err
	}
	var unsynced int64
	for off := int64(0); off < size; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-off)]
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		if unsynced += int64(len(b)); unsynced >= DiskSyncEvery {
			if err := datasync(f); err != nil {
				return err
			}
			unsynced = 0
		}
	}
	return datasync(f)
}
