package consumerstate

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/vfs"
)

// File names inside a consumer directory and in the obs directory. Part of
// the on-disk format (see doc.go).
const (
	metaFile     = "meta.inf"      // consumer config, JSON, as given to Create
	metaSumFile  = "meta.sum"      // 16 lowercase hex digits: xxhash64 of meta.inf
	newSuffix    = ".new"          // meta.inf.new, meta.sum.new: a config update in flight
	stateFile    = "state.dat"     // encoded State (see Encode), stamped with its generation
	stateTmpFile = "state.dat.tmp" // a snapshot being written
	tmpDirPrefix = ".tmp-"         // obs/.tmp-NAME: a consumer being created
	delDirPrefix = ".del-"         // obs/.del-NAME: a consumer being deleted
	metaSumLen   = 16
)

// metaSum returns the meta.sum contents for config bytes.
func metaSum(cfg []byte) []byte {
	var b [8]byte
	sum := xxhash.Sum64(cfg)
	for i := range b {
		b[i] = byte(sum >> (56 - 8*i))
	}
	return []byte(hex.EncodeToString(b[:]))
}

// checkMeta verifies config bytes against meta.sum contents.
func checkMeta(dir string, cfg, sum []byte) error {
	sumPath := filepath.Join(dir, metaSumFile)
	if len(sum) != metaSumLen {
		return corruptf("%s: offset 0: %d bytes, want %d hex digits", sumPath, len(sum), metaSumLen)
	}
	if _, err := hex.DecodeString(string(sum)); err != nil {
		return corruptf("%s: offset 0: not hex: %q", sumPath, sum)
	}
	if want := metaSum(cfg); string(want) != string(sum) {
		return corruptf("%s: offset 0: checksum %s does not match %s (computed %s)",
			sumPath, sum, filepath.Join(dir, metaFile), want)
	}
	if !json.Valid(cfg) {
		return corruptf("%s: offset 0: config is not valid JSON", filepath.Join(dir, metaFile))
	}
	return nil
}

// writeMeta writes meta.inf and meta.sum (each with the given suffix) and
// syncs both files, not the directory.
func writeMeta(fsys vfs.FS, dir string, cfg []byte, suffix string) error {
	if err := writeFile(fsys, filepath.Join(dir, metaFile+suffix), cfg); err != nil {
		return err
	}
	return writeFile(fsys, filepath.Join(dir, metaSumFile+suffix), metaSum(cfg))
}

// updateMeta replaces a consumer's config crash-safely: the new pair is
// written as meta.inf.new and meta.sum.new and made durable, then renamed
// over the old pair. resolveMeta finishes or undoes an update a crash
// interrupted.
func updateMeta(fsys vfs.FS, dir string, cfg []byte) error {
	if err := writeMeta(fsys, dir, cfg, newSuffix); err != nil {
		return err
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%s: sync dir: %w", dir, err)
	}
	for _, name := range []string{metaFile, metaSumFile} {
		p := filepath.Join(dir, name)
		if err := fsys.Rename(p+newSuffix, p); err != nil {
			return err
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%s: sync dir: %w", dir, err)
	}
	return nil
}

// metaPlan is what resolveMeta found: the effective config and the file
// operations that make the directory say so.
type metaPlan struct {
	cfg     []byte
	renames [][2]string // from, to
	removes []string
}

// resolveMeta reads a consumer's config, taking an interrupted update into
// account, without changing any file:
//
//   - meta.sum.new matching meta.inf.new: the update was durable before its
//     renames began; roll forward (both renames).
//   - meta.sum.new matching meta.inf, no meta.inf.new: the first rename
//     happened; roll forward (rename meta.sum.new).
//   - otherwise the .new files are leftovers of an update that never
//     became durable; remove them and keep meta.inf/meta.sum.
func resolveMeta(fsys vfs.FS, dir string) (metaPlan, error) {
	read := func(name string) ([]byte, bool, error) {
		b, err := readFile(fsys, filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return b, err == nil, err
	}
	infNew, haveInfNew, err := read(metaFile + newSuffix)
	if err != nil {
		return metaPlan{}, err
	}
	sumNew, haveSumNew, err := read(metaSumFile + newSuffix)
	if err != nil {
		return metaPlan{}, err
	}
	inf, haveInf, err := read(metaFile)
	if err != nil {
		return metaPlan{}, err
	}
	sum, haveSum, err := read(metaSumFile)
	if err != nil {
		return metaPlan{}, err
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	var plan metaPlan
	if haveSumNew {
		switch {
		case haveInfNew && checkMeta(dir, infNew, sumNew) == nil:
			plan.cfg = infNew
			plan.renames = [][2]string{
				{p(metaFile + newSuffix), p(metaFile)},
				{p(metaSumFile + newSuffix), p(metaSumFile)},
			}
			return plan, nil
		case !haveInfNew && haveInf && checkMeta(dir, inf, sumNew) == nil:
			plan.cfg = inf
			plan.renames = [][2]string{{p(metaSumFile + newSuffix), p(metaSumFile)}}
			return plan, nil
		}
	}
	if haveInfNew {
		plan.removes = append(plan.removes, p(metaFile+newSuffix))
	}
	if haveSumNew {
		plan.removes = append(plan.removes, p(metaSumFile+newSuffix))
	}
	switch {
	case !haveInf:
		return metaPlan{}, corruptf("%s: missing", p(metaFile))
	case !haveSum:
		return metaPlan{}, corruptf("%s: missing", p(metaSumFile))
	}
	if err := checkMeta(dir, inf, sum); err != nil {
		return metaPlan{}, err
	}
	plan.cfg = inf
	return plan, nil
}

// apply carries out the plan's file operations and syncs the directory if
// there were any.
func (m metaPlan) apply(fsys vfs.FS, dir string) error {
	if len(m.renames) == 0 && len(m.removes) == 0 {
		return nil
	}
	for _, r := range m.renames {
		if err := fsys.Rename(r[0], r[1]); err != nil {
			return err
		}
	}
	for _, r := range m.removes {
		if err := fsys.Remove(r); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("%s: sync dir: %w", dir, err)
	}
	return nil
}
