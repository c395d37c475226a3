// Package resident tells tests how much of a file the process has mapped
// resident, from /proc/self/smaps (Linux). Tests use it to check that a
// scan leaves no file pages in the resident set that it did not need.
package resident

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FileRSS returns the bytes of the process's resident set that belong to
// mappings of path, summed over every mapping of it (the Rss lines of
// /proc/self/smaps). A file that is not mapped has none.
func FileRSS(path string) (int64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("resident: %w", err)
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && len(fields) >= 5 {
			// A mapping's first line: range perms offset dev inode [path].
			in = len(fields) >= 6 && strings.Join(fields[5:], " ") == path
			continue
		}
		if in && fields[0] == "Rss:" && len(fields) >= 3 {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("resident: /proc/self/smaps: bad Rss line %q", line)
			}
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("resident: read /proc/self/smaps: %w", err)
	}
	return total, nil
}
