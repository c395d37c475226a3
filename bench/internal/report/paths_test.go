package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportNamesNoMachinePath renders a report whose data is full of this
// machine's absolute paths (binaries in the repository, store directories
// and server logs under the temporary directory, the home directory) and
// checks that no written text file contains any of them.
func TestReportNamesNoMachinePath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := repoRoot(wd)
	if root == "" {
		t.Fatalf("no repository above %s", wd)
	}
	tmp := t.TempDir()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	d := synthetic(2, 1)
	d.Meta.A.Path = filepath.Join(root, ".bin", "jetwal")
	d.Meta.B.Path = filepath.Join(home, "bin", "nats-server")
	d.Meta.Command = []string{filepath.Join(root, ".bin", "jetwal-bench"), "-out", filepath.Join(root, "bench", "results"), "-tmp", tmp}
	d.Meta.Notes = []string{
		"rep 1 default: proc: jetwal (default) not ready: boom\n  log " + filepath.Join(tmp, "jetwal-bench-jetwal-123", "server-1.log") + ":\n    x",
		"working directory " + root,
	}
	d.Runs[0].Err = "workload: open " + filepath.Join(os.TempDir(), "jetwal-bench-nats-server-9", "store") + ": no space left on device"
	out := t.TempDir()
	if err := Write(out, d); err != nil {
		t.Fatal(err)
	}
	forbidden := []string{root, wd, home + "/", os.TempDir() + "/", tmp, "/tmp/"}
	for _, name := range []string{FileReport, FilePerformance, FileRuns, FileSummary, FileGrowth, FileDurables, FileData} {
		text := string(mustRead(t, filepath.Join(out, name)))
		for _, f := range forbidden {
			if i := strings.Index(text, f); i >= 0 {
				t.Errorf("%s names the machine path %q: …%s…", name, f, text[max(0, i-40):min(len(text), i+len(f)+40)])
			}
		}
	}
	md := string(mustRead(t, filepath.Join(out, FileReport)))
	for _, want := range []string{"`.bin/jetwal`", "`~/bin/nats-server`", ".bin/jetwal-bench -out bench/results -tmp $TMPDIR/", "log $TMPDIR/", "working directory .\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}
}

func TestRepoRoot(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := repoRoot(deep); got != "" && strings.HasPrefix(got, dir) {
		t.Fatalf("root %q found without .git", got)
	}
	// A git worktree has a .git file, not a directory.
	if err := os.WriteFile(filepath.Join(dir, "a", ".git"), []byte("gitdir: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := repoRoot(deep); got != filepath.Join(dir, "a") {
		t.Fatalf("root %q, want %s", got, filepath.Join(dir, "a"))
	}
}
