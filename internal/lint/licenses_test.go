package lint

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// licenseKinds recognise the licenses of the modules the binary links, by
// phrases of their texts. One file may hold several (klauspost/compress
// carries BSD-3-Clause, Apache-2.0 and MIT parts).
var licenseKinds = []struct {
	id     string
	phrase *regexp.Regexp
}{
	{"Apache-2.0", regexp.MustCompile(`(?s)Apache License\s+Version 2\.0`)},
	{"MPL-2.0", regexp.MustCompile(`(?i)Mozilla Public License,? version 2\.0`)},
	{"MIT", regexp.MustCompile(`Permission is hereby granted, free of charge, to any person obtaining`)},
	{"BSD-3-Clause", regexp.MustCompile(`(?s)Redistribution and use in source and binary forms.*Neither the name`)},
	{"BSD-2-Clause", regexp.MustCompile(`Redistribution and use in source and binary forms`)}, // unless BSD-3-Clause matched
	{"ISC", regexp.MustCompile(`Permission to use, copy, modify, and(/or)? distribute this software for any`)},
}

var licenseFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying)(\.md|\.txt)?$`)

// TestLicenses lists the license of every module linked into the jetwal
// binary (go list -deps of ./cmd/jetwal, read from the module cache: no
// network) and fails when a module has no license file it recognises, or
// when NOTICE does not name the module at that version. `make licenses`
// prints the list.
func TestLicenses(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command("go", "list", "-deps", "-f", `{{with .Module}}{{if not .Main}}{{.Path}}|{{.Version}}|{{.Dir}}{{end}}{{end}}`, "./cmd/jetwal")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/jetwal: %v", err)
	}
	notice, err := os.ReadFile(filepath.Join(root, "NOTICE"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "LICENSE")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(lines)
	lines = slices.Compact(lines)
	var table strings.Builder
	for _, line := range lines {
		f := strings.Split(line, "|")
		if len(f) != 3 || f[2] == "" {
			t.Errorf("module %q: not in the module cache (go mod download)", line)
			continue
		}
		path, version, dir := f[0], f[1], f[2]
		kinds, files := moduleLicenses(t, dir)
		if len(kinds) == 0 {
			t.Errorf("%s %s: no recognisable license file (found %v)", path, version, files)
		}
		fmt.Fprintf(&table, "%-50s %-36s %s\n", path, version, strings.Join(kinds, ", "))
		if !bytes.Contains(notice, []byte(path+" "+version)) {
			t.Errorf("NOTICE does not name %s %s, which the binary links", path, version)
		}
	}
	t.Logf("modules linked into jetwal (%d):\n%s", len(lines), table.String())
}

// moduleLicenses returns the license ids recognised in the license files
// at the top of a module's directory, and the names of those files.
func moduleLicenses(t *testing.T, dir string) (kinds, files []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !licenseFile.MatchString(e.Name()) {
			continue
		}
		files = append(files, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range licenseKinds {
			if k.phrase.Match(b) && !slices.Contains(kinds, k.id) {
				kinds = append(kinds, k.id)
			}
		}
	}
	if slices.Contains(kinds, "BSD-3-Clause") {
		kinds = slices.DeleteFunc(kinds, func(k string) bool { return k == "BSD-2-Clause" })
	}
	return kinds, files
}
