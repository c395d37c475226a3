//go:build !linux

package proc

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// SettleDisks is a no-op here: the deferred writeback it guards against is
// measured on Linux.
func SettleDisks() {}

// preallocate does nothing here: the writes extend the file.
func preallocate(*os.File, int64) error { return nil }

// datasync flushes f with fsync, the portable equivalent of fdatasync.
func datasync(f *os.File) error { return f.Sync() }
