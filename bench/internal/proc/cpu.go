package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// clockTick is the kernel's USER_HZ (sysconf(_SC_CLK_TCK), `getconf
// CLK_TCK`), the unit of the CPU times in /proc/PID/stat: 100 on every
// Linux architecture Go supports, whatever the kernel's CONFIG_HZ.
// TestCPUTimeMatchesRusage checks it against getrusage.
const clockTick = time.Second / 100

// CPUResolution is the resolution of CPUTime: one clock tick.
const CPUResolution = clockTick

// ticksToDuration converts clock ticks of /proc/PID/stat to a duration.
func ticksToDuration(ticks int64) time.Duration { return time.Duration(ticks) * clockTick }

// CPUTime returns the user plus system CPU time the process has used, from
// /proc/PID/stat (utime + stime, summed over all its threads). Its
// resolution is one clock tick, 10 ms.
func CPUTime(pid int) (time.Duration, error) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("proc: read %s: %w", path, err)
	}
	return parseStatCPU(raw, path)
}

// parseStatCPU extracts utime and stime (fields 14 and 15) from the text of
// a /proc/PID/stat file. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStatCPU(raw []byte, path string) (time.Duration, error) {
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc: %s: no command name", path)
	}
	f := bytes.Fields(raw[i+1:])
	// f[0] is field 3 (state), so utime is f[11] and stime f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("proc: %s: %d fields after the command name, want at least 13", path, len(f))
	}
	var total int64
	for _, j := range []int{11, 12} {
		n, err := strconv.ParseInt(string(f[j]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc: %s: field %d: %w", path, j+3, err)
		}
		if n < 0 {
			return 0, fmt.Errorf("proc: %s: field %d: negative tick count %d", path, j+3, n)
		}
		total += n
	}
	return ticksToDuration(total), nil
}

// CPUTime returns the CPU time of the running process.
func (s *Server) CPUTime() (time.Duration, error) {
	if s.run == nil {
		return 0, fmt.Errorf("proc: %s not running", s.spec.Name)
	}
	return CPUTime(s.PID())
}

// SelfCPUTime returns the user plus system CPU time this process has used
// (getrusage RUSAGE_SELF, microsecond resolution): the benchmark's clients
// run in it, so the difference around a run is the client side's cost.
func SelfCPUTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("proc: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
