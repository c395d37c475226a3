package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// readAllow reads the allow-list of known differences: one feature per line,
// followed by the reason; blank lines and lines starting with # are ignored.
// A missing file is an empty list.
func readAllow(path string) (map[string]string, error) {
	out := map[string]string{}
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
		feature, reason, _ := strings.Cut(text, " ")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return nil, fmt.Errorf("allow-list %s:%d: feature %q has no reason", path, line, feature)
		}
		out[feature] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("allow-list %s: %w", path, err)
	}
	return out, nil
}
