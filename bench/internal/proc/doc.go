// Package proc starts and stops the servers under comparison as child
// processes: jetwal (`jetwal serve -js`) and nats-server (`nats-server -js`).
//
// Each server gets a fresh store directory made with os.MkdirTemp and a
// loopback port picked by listening on 127.0.0.1:0 and closing the listener.
// A Server can be stopped cleanly (SIGTERM, then SIGKILL after a grace
// period), killed with SIGKILL to simulate a crash, and restarted on the same
// store directory and port, which is how restart times are measured.
//
// Memory is read from /proc/PID/status (VmRSS, VmHWM) while the process runs,
// and always just before it is stopped or killed, so the last VmHWM sample is
// the peak of the whole lifetime. The kernel's rusage at exit (ru_maxrss) is
// not used: Go starts a child with vfork, and the kernel folds the forking
// process's peak into the child's ru_maxrss, so every server started by a
// benchmark process of 157 MiB reported at least 157 MiB.
package proc
