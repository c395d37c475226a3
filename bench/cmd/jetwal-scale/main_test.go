package main

import "testing"

// TestProcParsing: CPU seconds come from the fields after the command
// name, which may hold spaces and parentheses; a short or garbled line is
// an error; the resident set is read from its status line.
func TestProcParsing(t *testing.T) {
	line := "1234 (jet wal) (x)) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 100 0 0"
	if got, err := cpuSeconds(line); err != nil || got != 3.25 {
		t.Fatalf("cpuSeconds = %v, %v; want 3.25", got, err)
	}
	for _, bad := range []string{"1234 jetwal S 1", "1234 (jetwal) S 1 2 3", "1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 7 0"} {
		if _, err := cpuSeconds(bad); err == nil {
			t.Errorf("cpuSeconds(%q) gave no error", bad)
		}
	}
	status := "Name:\tjetwal\nVmPeak:\t 99 kB\nVmRSS:\t   58768 kB\nThreads:\t13\n"
	if got := statusKiB(status, "VmRSS:"); got != 58768 {
		t.Fatalf("statusKiB = %d, want 58768", got)
	}
	if got := statusKiB(status, "VmSwap:"); got != 0 {
		t.Fatalf("statusKiB of a missing key = %d, want 0", got)
	}
}
