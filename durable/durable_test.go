package durable

import (
	"testing"
	"time"
)

func TestParseAndString(t *testing.T) {
	for in, want := range map[string]Policy{
		"always": {Mode: Always}, "": {Mode: Always}, "NEVER": {Mode: Never},
		"200ms": {Mode: Interval, Interval: 200 * time.Millisecond}, " 2m ": {Mode: Interval, Interval: 2 * time.Minute},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, err := Parse(got.String()); err != nil || back != got {
			t.Fatalf("%+v renders as %q, which parses as %+v, %v", got, got.String(), back, err)
		}
	}
	for _, bad := range []string{"sometimes", "-1s", "0s", "10"} {
		if _, err := Parse(bad); err == nil {
			t.Fatalf("Parse(%q) accepted", bad)
		}
	}
	var zero Policy
	if zero.Mode != Always || zero.String() != "always" {
		t.Fatalf("zero policy is %v, want always", zero)
	}
}
