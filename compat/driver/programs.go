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

// program is one feature's client program: its name in the table and the
// command that runs it (NATS_URL is added to its environment).
type program struct {
	name string
	argv []string
}

// listPrograms returns the node programs in dir (every *.mjs but the shared
// lib.mjs) and, when goclient is set, the nats.go programs it lists, sorted
// by name; with only set, just the features it names, each of which must
// exist.
func listPrograms(node string, nodeFlags []string, dir, goclient, only string) ([]program, error) {
	all := map[string]program{}
	matches, err := filepath.Glob(filepath.Join(dir, "*.mjs"))
	if err != nil {
		return nil, fmt.Errorf("list programs in %s: %w", dir, err)
	}
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".mjs")
		if name != "lib" {
			argv := append(append([]string{node}, nodeFlags...), m)
			all[name] = program{name: name, argv: argv}
		}
	}
	if goclient != "" {
		out, err := exec.Command(goclient, "-list").Output()
		if err != nil {
			return nil, fmt.Errorf("list the nats.go programs (%s -list): %w", goclient, err)
		}
		for _, name := range strings.Fields(string(out)) {
			all[name] = program{name: name, argv: []string{goclient, name}}
		}
	}
	var names []string
	if only != "" {
		for _, f := range strings.Split(only, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if _, ok := all[f]; !ok {
				return nil, fmt.Errorf("feature %q: no program %s.mjs in %s nor in the nats.go client", f, f, dir)
			}
			names = append(names, f)
		}
	} else {
		for n := range all {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no programs in %s", dir)
	}
	out := make([]program, len(names))
	for i, n := range names {
		out[i] = all[n]
	}
	return out, nil
}

// buildGoclient compiles the nats.go programs into dir.
func buildGoclient(goTool, dir string) (string, error) {
	bin := filepath.Join(dir, "goclient")
	cmd := exec.Command(goTool, "build", "-o", bin, "./goclient")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the nats.go programs: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// runProgram runs one feature program against url and returns
// its single line of JSON, or a description of how it failed. A program
// that ended in an uncaught error printed {"uncaught": ...}: that counts as
// a failed run, so an error both servers give cannot pass as "same".
func runProgram(p program, url, wsURL string, timeout time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.argv[0], p.argv[1:]...)
	cmd.Env = append(os.Environ(), "NATS_URL="+url, "NATS_WS_URL="+wsURL)
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
