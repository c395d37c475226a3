package jetstream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jetwal/jetwal/vfs"
)

// The checks of the files this package owns, for `jetwal verify`: they read
// and never change anything (opening a store repairs; checking does not).

// CheckStreamMeta checks a stream directory's meta.inf against meta.sum.
// note is set when an interrupted update is pending that the next start
// completes (not damage).
func CheckStreamMeta(fsys vfs.FS, dir string) (note string, err error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	inf, sum := filepath.Join(dir, metaFile), filepath.Join(dir, sumFile)
	b, err := readFile(fsys, inf)
	if err != nil {
		return "", fmt.Errorf("%s: %w", inf, err)
	}
	got, err := readFile(fsys, sum)
	if err != nil {
		return "", fmt.Errorf("%s: %w", sum, err)
	}
	want := checksum(b)
	if strings.TrimSpace(string(got)) == want {
		return "", nil
	}
	if p, err := readFile(fsys, sum+tmpSuffix); err == nil && strings.TrimSpace(string(p)) == want {
		return fmt.Sprintf("%s: update in progress (%s holds the new checksum; the server completes it)", sum, sum+tmpSuffix), nil
	}
	return "", fmt.Errorf("%w: %s: offset 0: checksum %q does not match %s (computed %s)", ErrMetaCorrupt, sum, got, inf, want)
}

// StreamDirs lists the stream directories of every account in a store:
// storeDir is the -sd directory or its "jetstream" directory. Directories
// of creates and deletes in progress (hidden names) are left out.
func StreamDirs(fsys vfs.FS, storeDir string) ([]string, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	js := filepath.Join(storeDir, "jetstream")
	if fi, err := fsys.Stat(js); err != nil || !fi.IsDir {
		js = storeDir
	}
	accounts, err := fsys.ReadDir(js)
	if err != nil {
		return nil, err
	}
	var dirs []string
	found := false
	for _, acc := range accounts {
		// Files beside the account directories (the store's LOCK) hold no
		// streams.
		if fi, err := fsys.Stat(filepath.Join(js, acc)); err != nil || !fi.IsDir {
			continue
		}
		streams := filepath.Join(js, acc, "streams")
		names, err := fsys.ReadDir(streams)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		for _, n := range names {
			p := filepath.Join(streams, n)
			if strings.HasPrefix(n, ".") {
				continue
			}
			if fi, err := fsys.Stat(p); err == nil && fi.IsDir {
				dirs = append(dirs, p)
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s holds no jetstream/<account>/streams directory", storeDir)
	}
	sort.Strings(dirs)
	return dirs, nil
}
