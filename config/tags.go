package config

import (
	"slices"
	"strings"
)

// NormalizeTags returns server tags as nats-server keeps them: each
// trimmed and lower-cased, empty ones dropped, each once, in their order.
func NormalizeTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
