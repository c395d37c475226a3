package proc

import "syscall"

// sysProcAttr makes the kernel kill a server if the bench process dies, so
// an interrupted run leaves no servers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
