package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// pathScrubber rewrites this machine's absolute paths in generated text so
// that a committed report names none of them: paths inside the repository
// become relative to its root, the temporary directory becomes $TMPDIR and
// the home directory ~. Error messages and notes (server log paths, store
// directories) are the usual carriers.
func pathScrubber() *strings.Replacer {
	type pair struct{ old, new string }
	var pairs []pair
	add := func(dir, name string) {
		dir = filepath.Clean(dir)
		if dir == "" || dir == "." || dir == string(filepath.Separator) || !filepath.IsAbs(dir) {
			return
		}
		pairs = append(pairs, pair{dir + "/", name + "/"}, pair{dir, name})
		// The same directory reached through a symbolic link.
		if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir && real != "/" {
			pairs = append(pairs, pair{real + "/", name + "/"}, pair{real, name})
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if root := repoRoot(wd); root != "" {
			// "root/x" becomes "x"; the root alone becomes ".".
			root = filepath.Clean(root)
			if root != "/" {
				pairs = append(pairs, pair{root + "/", ""}, pair{root, "."})
			}
		}
	}
	add(os.TempDir(), "$TMPDIR")
	if home, err := os.UserHomeDir(); err == nil {
		add(home, "~")
	}
	// The longest prefix wins: a repository under the home directory is
	// written relative to the repository, not as ~/….
	slices.SortStableFunc(pairs, func(x, y pair) int { return len(y.old) - len(x.old) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return strings.NewReplacer(args...)
}

// repoRoot is the nearest directory at or above dir holding .git (a
// directory, or a file in a git worktree), or "" when there is none.
func repoRoot(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
