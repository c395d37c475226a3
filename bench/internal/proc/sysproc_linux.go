package proc

import "syscall"

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
