// Package proccpu reads the CPU time the running process has used, user
// and system, every thread: the monitoring endpoint's cpu figure and the
// benchmarks' CPU per operation.
package proccpu
