//go:build !amd64

package wal

// Without a time-stamp counter read here, clock uses the monotonic clock.

func readTSC() uint64 { return 0 }

func tscUsable() bool { return false }
