package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Bytes is a memory or disk size in bytes.
type Bytes int64

// MiB returns b in mebibytes.
func (b Bytes) MiB() float64 { return float64(b) / (1 << 20) }

// Mem is one sample of a process's memory use.
type Mem struct {
	// RSS is the resident set size now (VmRSS).
	RSS Bytes
	// HWM is the peak resident set size so far (VmHWM).
	HWM Bytes
	// Anon is the anonymous part of RSS (RssAnon: heap, stacks), without
	// file pages mapped from the store (RssFile), which the kernel can
	// drop under pressure. Zero on kernels before 4.5.
	Anon Bytes
}

// ReadMem reads VmRSS and VmHWM from /proc/PID/status.
func ReadMem(pid int) (Mem, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	raw, err := os.ReadFile(path)
	if err != nil {
		return Mem{}, fmt.Errorf("proc: read %s: %w", path, err)
	}
	return parseStatus(raw, path)
}

// parseStatus extracts VmRSS and VmHWM (reported in kB) from the text of a
// /proc/PID/status file.
func parseStatus(raw []byte, path string) (Mem, error) {
	var m Mem
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM" && key != "RssAnon") {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) != 2 || fields[1] != "kB" {
			return Mem{}, fmt.Errorf("proc: %s: malformed %s line %q", path, key, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("proc: %s: %s: %w", path, key, err)
		}
		switch key {
		case "VmRSS":
			m.RSS = Bytes(kb << 10)
			seen++
		case "VmHWM":
			m.HWM = Bytes(kb << 10)
			seen++
		default:
			m.Anon = Bytes(kb << 10)
		}
	}
	if err := sc.Err(); err != nil {
		return Mem{}, fmt.Errorf("proc: scan %s: %w", path, err)
	}
	if seen != 2 {
		return Mem{}, fmt.Errorf("proc: %s: VmRSS or VmHWM missing", path)
	}
	return m, nil
}

// DirSize sums the sizes of the regular files under dir.
func DirSize(dir string) (Bytes, error) {
	var total Bytes
	err := walkFiles(dir, func(size int64) { total += Bytes(size) })
	if err != nil {
		return 0, fmt.Errorf("proc: size of %s: %w", dir, err)
	}
	return total, nil
}
