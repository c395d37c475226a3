package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestJSONDiffPaths(t *testing.T) {
	a := `{"state":{"bytes":145,"messages":3},"list":[1,2],"only_a":true}`
	b := `{"state":{"bytes":195,"messages":3},"list":[1,3]}`
	got := jsonDiff(a, b, 10)
	want := []string{"$.list[1]", "$.only_a", "$.state.bytes"}
	if len(got) != len(want) {
		t.Fatalf("diff %v, want paths %v", got, want)
	}
	for i, d := range got {
		if d.path != want[i] {
			t.Errorf("diff %d at %s, want %s (%s)", i, d.path, want[i], d.text)
		}
	}
	if !strings.Contains(got[1].text, "nats-server=(absent)") {
		t.Errorf("missing field not shown as absent: %s", got[1].text)
	}
	if d := jsonDiff(a, a, 10); len(d) != 0 {
		t.Errorf("equal documents differ: %v", d)
	}
	if d := jsonDiff("timed out", a, 10); len(d) != 1 || d[0].path != "$" {
		t.Errorf("non-JSON result: %v", d)
	}
}

func TestAllowList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allow.txt")
	text := "# comment\n\nkv $.state.bytes bytes counted differently\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	allow, err := readAllow(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := allow["kv"]["$.state.bytes"]; got != "bytes counted differently" {
		t.Fatalf("reason %q", got)
	}
	only := []difference{{path: "$.state.bytes"}}
	if !allow.allowed("kv", only) {
		t.Error("listed difference not allowed")
	}
	if allow.allowed("kv", append(only, difference{path: "$.state.messages"})) {
		t.Error("unlisted path allowed")
	}
	if allow.allowed("purge", only) {
		t.Error("path of another feature allowed")
	}
	if err := os.WriteFile(path, []byte("kv $.x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readAllow(path); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Errorf("entry without reason: err %v", err)
	}
	if a, err := readAllow(filepath.Join(t.TempDir(), "none")); err != nil || len(a) != 0 {
		t.Errorf("missing file: %v %v", a, err)
	}
}
