package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// features lists the programs in dir (every *.mjs but the shared lib.mjs),
// by name without the extension, or checks that each requested one exists.
func features(dir string, only string) ([]string, error) {
	if only != "" {
		var out []string
		for _, f := range strings.Split(only, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, f+".mjs")); err != nil {
				return nil, fmt.Errorf("feature %q: no program %s", f, filepath.Join(dir, f+".mjs"))
			}
			out = append(out, f)
		}
		return out, nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*.mjs"))
	if err != nil {
		return nil, fmt.Errorf("list programs in %s: %w", dir, err)
	}
	var out []string
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".mjs")
		if name != "lib" {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no programs in %s", dir)
	}
	sort.Strings(out)
	return out, nil
}

// runProgram runs one feature program under node against url and returns
// its single line of JSON, or a description of how it failed. A program
// that ended in an uncaught error printed {"uncaught": ...}: that counts as
// a failed run, so an error both servers give cannot pass as "same".
func runProgram(node, dir, feature, url string, timeout time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, feature+".mjs"))
	cmd.Env = append(os.Environ(), "NATS_URL="+url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Sprintf("timed out after %s", timeout), false
	}
	if err != nil {
		return fmt.Sprintf("program failed: %v: %s", err, strings.TrimSpace(stderr.String())), false
	}
	out := strings.TrimSpace(stdout.String())
	if out == "" {
		return "program printed nothing: " + strings.TrimSpace(stderr.String()), false
	}
	if strings.HasPrefix(out, `{"uncaught":`) {
		return out, false
	}
	return out, true
}
