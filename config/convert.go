package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Conversions of parsed values. The conf parser yields string, bool,
// int64, float64, time.Time, []any and map[string]any; sizes with a suffix
// (1MB) are already int64.

func (v value) str(name string) (string, error) {
	s, ok := v.v.(string)
	if !ok {
		return "", v.errorf("%s: expected a string, got %s", name, typeName(v.v))
	}
	return s, nil
}

func (v value) boolean(name string) (bool, error) {
	switch b := v.v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true", "yes", "on", "enabled":
			return true, nil
		case "false", "no", "off", "disabled":
			return false, nil
		}
	}
	return false, v.errorf("%s: expected true or false, got %s", name, describe(v.v))
}

func (v value) integer(name string, lo, hi int64) (int64, error) {
	n, ok := v.v.(int64)
	if !ok {
		return 0, v.errorf("%s: expected an integer, got %s", name, describe(v.v))
	}
	if n < lo || n > hi {
		return 0, v.errorf("%s: %d is out of range [%d, %d]", name, n, lo, hi)
	}
	return n, nil
}

// size accepts an integer (1048576, 1MB) or a string with a suffix
// ("1GB", "512M"); powers of 1024 as in nats-server.
func (v value) size(name string) (int64, error) {
	switch n := v.v.(type) {
	case int64:
		if n < 0 {
			return 0, v.errorf("%s: %d is negative", name, n)
		}
		return n, nil
	case string:
		if b, ok := parseSize(n); ok {
			return b, nil
		}
	}
	return 0, v.errorf("%s: expected a size such as 1048576 or \"1MB\", got %s", name, describe(v.v))
}

// ParseSize reads a byte count with an optional unit, as sizes are written
// in configuration files and on jetwal serve's command line: 1048576,
// "1MB", "1 MiB", "512k" (every unit a power of 1024, as nats-server
// reads them).
func ParseSize(s string) (int64, error) {
	n, ok := parseSize(s)
	if !ok {
		return 0, fmt.Errorf("size %q: want a byte count like 1048576 or 1MB", s)
	}
	return n, nil
}

func parseSize(s string) (int64, bool) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TIB", 1 << 40}, {"TB", 1 << 40}, {"T", 1 << 40}, {"GIB", 1 << 30}, {"GB", 1 << 30}, {"G", 1 << 30},
		{"MIB", 1 << 20}, {"MB", 1 << 20}, {"M", 1 << 20}, {"KIB", 1 << 10}, {"KB", 1 << 10}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}

// duration accepts a Go duration string ("2m", "500ms") or a number of
// seconds (2, 0.5), as nats-server does for its timeouts and intervals.
func (v value) duration(name string) (time.Duration, error) {
	var d time.Duration
	switch x := v.v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(x); err != nil {
			return 0, v.errorf("%s: %q is not a duration such as \"2m\" or \"500ms\"", name, x)
		}
	case int64:
		d = time.Duration(x) * time.Second
	case float64:
		d = time.Duration(x * float64(time.Second))
	default:
		return 0, v.errorf("%s: expected a duration, got %s", name, describe(v.v))
	}
	if d < 0 {
		return 0, v.errorf("%s: %v is negative", name, d)
	}
	return d, nil
}

// strings accepts one string or an array of them.
func (v value) strings(name string) ([]string, error) {
	switch x := v.v.(type) {
	case string:
		return []string{x}, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, err := unwrap(e, v.pos).str(name)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, v.errorf("%s: expected a string or an array of strings, got %s", name, describe(v.v))
}

func (v value) block(name string) (map[string]any, error) {
	m, ok := v.v.(map[string]any)
	if !ok {
		return nil, v.errorf("%s: expected a block { ... }, got %s", name, describe(v.v))
	}
	return m, nil
}

func (v value) array(name string) ([]any, error) {
	a, ok := v.v.([]any)
	if !ok {
		return nil, v.errorf("%s: expected an array [ ... ], got %s", name, describe(v.v))
	}
	return a, nil
}

func typeName(x any) string {
	switch x.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "a block"
	}
	return "a date"
}

func describe(x any) string {
	switch y := x.(type) {
	case string:
		return strconv.Quote(y)
	case int64, float64, bool:
		return typeName(x) + " " + toString(y)
	}
	return typeName(x)
}

func toString(x any) string {
	switch y := x.(type) {
	case int64:
		return strconv.FormatInt(y, 10)
	case float64:
		return strconv.FormatFloat(y, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(y)
	}
	return ""
}
