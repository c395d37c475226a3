package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestBenchUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"bench"}, &out, &errb); code != 2 {
		t.Fatalf("jetwal bench: exit %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "jetwal bench compare") {
		t.Fatalf("usage missing: %q", errb.String())
	}
}
