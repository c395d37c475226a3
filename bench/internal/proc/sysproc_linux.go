package proc

import (
	"os"
	"syscall"
)

// sysProcAttr makes the kernel kill a server if the bench process dies, so
// an interrupted run leaves no servers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// SettleDisks writes every dirty page in the system back to disk (sync(2))
// and waits for it. The comparison calls it before each timed run: a server
// that does not fsync leaves its writes in the page cache, and without this
// the kernel writes them back during whichever run comes next, so one
// server's deferred writeback would be charged to the other's run.
func SettleDisks() { syscall.Sync() }

// preallocate reserves size bytes for f with fallocate (mode 0), as jetwal
// does for a segment; where the filesystem cannot, the writes extend it.
func preallocate(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if err == syscall.EOPNOTSUPP || err == syscall.ENOSYS {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}

// datasync flushes f's data (fdatasync), as jetwal's sync does.
func datasync(f *os.File) error {
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}
