//go:build !linux

package proc

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
