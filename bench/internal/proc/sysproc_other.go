//go:build !linux

package proc

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }

// SettleDisks is a no-op here: the deferred writeback it guards against is
// measured on Linux.
func SettleDisks() {}
