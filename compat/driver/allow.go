package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// allowList holds the known differences: for each feature, the JSON paths
// whose values may differ between the servers, each with its reason.
type allowList map[string]map[string]string

// readAllow reads the allow-list: one "feature path reason" per line, where
// path is a JSON path as the report prints it ($.state.bytes); blank lines
// and lines starting with # are ignored. A missing file is an empty list.
func readAllow(path string) (allowList, error) {
	out := allowList{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("allow-list: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 3 || !strings.HasPrefix(fields[1], "$") {
			return nil, fmt.Errorf("allow-list %s:%d: want \"feature $.path reason\", got %q", path, line, text)
		}
		if out[fields[0]] == nil {
			out[fields[0]] = map[string]string{}
		}
		out[fields[0]][fields[1]] = strings.Join(fields[2:], " ")
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("allow-list %s: %w", path, err)
	}
	return out, nil
}

// allowed reports whether every difference of feature is in the list.
func (a allowList) allowed(feature string, diffs []difference) bool {
	if len(diffs) == 0 {
		return false
	}
	for _, d := range diffs {
		if _, ok := a[feature][d.path]; !ok {
			return false
		}
	}
	return true
}
