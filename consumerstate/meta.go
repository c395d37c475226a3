package consumerstate

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
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

// A sealed meta.inf (Options.Key): magic, version, three zero bytes, then
// the config JSON sealed with the associated data adMeta || those 8 bytes
// || the consumer's name. meta.sum is the checksum of the stored bytes,
// sealed or not. Part of the on-disk format (doc.go).
const (
	metaSealedMagic   = "JWCM"
	metaSealedVersion = 1
	metaSealedHeader  = 8
)

// sealMeta returns the stored form of consumer name's config: the JSON
// itself in a plain store.
func (s *sealer) sealMeta(name string, cfg []byte) ([]byte, error) {
	if !s.on() {
		return cfg, nil
	}
	b := make([]byte, metaSealedHeader, metaSealedHeader+len(cfg)+crypt.Overhead)
	copy(b, metaSealedMagic)
	b[4] = metaSealedVersion
	return s.seal(b, cfg, headerAD(adMeta, b[:metaSealedHeader], name))
}

// checkMeta verifies stored config bytes (meta.inf) against meta.sum
// contents and returns the config, opened through o. Without a key (lax)
// a sealed meta.inf is checked by its checksum only and the config is nil.
func checkMeta(dir string, stored, sum []byte, o opener) ([]byte, error) {
	sumPath, infPath := filepath.Join(dir, metaSumFile), filepath.Join(dir, metaFile)
	if len(sum) != metaSumLen {
		return nil, corruptf("%s: offset 0: %d bytes, want %d hex digits", sumPath, len(sum), metaSumLen)
	}
	if _, err := hex.DecodeString(string(sum)); err != nil {
		return nil, corruptf("%s: offset 0: not hex: %q", sumPath, sum)
	}
	if want := metaSum(stored); string(want) != string(sum) {
		return nil, corruptf("%s: offset 0: checksum %s does not match %s (computed %s)",
			sumPath, sum, infPath, want)
	}
	cfg := stored
	sealed := len(stored) >= metaSealedHeader && string(stored[:4]) == metaSealedMagic
	if ok, why := o.sealedOK(sealed); !ok {
		return nil, corruptf("%s: offset 0: %s", infPath, why)
	}
	if sealed {
		if stored[4] != metaSealedVersion || stored[5]|stored[6]|stored[7] != 0 {
			return nil, corruptf("%s: offset 4: unknown sealed config version %d or reserved bytes set", infPath, stored[4])
		}
		if o.key == nil {
			return nil, nil // lax: checked by the checksum only
		}
		var err error
		cfg, err = o.key.Open(nil, stored[metaSealedHeader:], headerAD(adMeta, stored[:metaSealedHeader], filepath.Base(dir)))
		if err != nil {
			return nil, corruptf("%s: offset %d: sealed config does not open (damaged, moved, or another key): %v", infPath, metaSealedHeader, err)
		}
	}
	if !json.Valid(cfg) {
		return nil, corruptf("%s: offset 0: config is not valid JSON", infPath)
	}
	return cfg, nil
}

// writeMeta writes meta.inf (stored, the config as sealMeta stores it)
// and meta.sum (each with the given suffix) and syncs both files, not the
// directory.
func writeMeta(fsys vfs.FS, dir string, stored []byte, suffix string) error {
	if err := writeFile(fsys, filepath.Join(dir, metaFile+suffix), stored); err != nil {
		return err
	}
	return writeFile(fsys, filepath.Join(dir, metaSumFile+suffix), metaSum(stored))
}

// updateMeta replaces a consumer's config crash-safely: the new pair is
// written as meta.inf.new and meta.sum.new and made durable, then renamed
// over the old pair. resolveMeta finishes or undoes an update a crash
// interrupted. stored is the config as sealMeta stores it.
func updateMeta(fsys vfs.FS, dir string, stored []byte) error {
	if err := writeMeta(fsys, dir, stored, newSuffix); err != nil {
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

// resolveMeta reads a consumer's config (opened through o), taking an
// interrupted update into account, without changing any file:
//
//   - meta.sum.new matching meta.inf.new: the update was durable before its
//     renames began; roll forward (both renames).
//   - meta.sum.new matching meta.inf, no meta.inf.new: the first rename
//     happened; roll forward (rename meta.sum.new).
//   - otherwise the .new files are leftovers of an update that never
//     became durable; remove them and keep meta.inf/meta.sum.
func resolveMeta(fsys vfs.FS, dir string, o opener) (metaPlan, error) {
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
		if haveInfNew {
			if cfg, err := checkMeta(dir, infNew, sumNew, o); err == nil {
				plan.cfg = cfg
				plan.renames = [][2]string{
					{p(metaFile + newSuffix), p(metaFile)},
					{p(metaSumFile + newSuffix), p(metaSumFile)},
				}
				return plan, nil
			}
		} else if haveInf {
			if cfg, err := checkMeta(dir, inf, sumNew, o); err == nil {
				plan.cfg = cfg
				plan.renames = [][2]string{{p(metaSumFile + newSuffix), p(metaSumFile)}}
				return plan, nil
			}
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
	cfg, err := checkMeta(dir, inf, sum, o)
	if err != nil {
		return metaPlan{}, err
	}
	plan.cfg = cfg
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
