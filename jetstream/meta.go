package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// Stream directory layout, as nats-server lays it out:
//
//	<StoreDir>/jetstream/$G/streams/<name>/
//	    meta.inf    the stream config as JSON, with "Created" first
//	    meta.sum    16 lowercase hex digits: xxhash64 of meta.inf's bytes
//	    msgs/       the message store (wal segments and index)
//	    obs/        consumer state, one directory per consumer
//
// meta.sum is jetwal's own checksum (nats-server uses HighwayHash); the
// directory shape and meta.inf's JSON match nats-server's. In an encrypted
// stream (msgs/key.jwk present) meta.inf holds that JSON sealed
// (sealed_file.go) and meta.sum the checksum of the sealed bytes; dedupe.dat
// and ttl.dat sit beside them (dedupe_file.go, ttl_file.go).
//
// Updating the metadata writes meta.inf.tmp and meta.sum.tmp, syncs both,
// renames meta.inf.tmp over meta.inf, then meta.sum.tmp over meta.sum, then
// syncs the directory. A crash between the two renames leaves a new meta.inf
// whose checksum is in meta.sum.tmp; loading notices that and completes the
// second rename. A crash before the first rename leaves the old pair intact.
//
// A stream is created in a hidden sibling directory (".<name>.new") that is
// renamed into place once meta.inf is durable, and deleted by renaming it to
// ".<name>.del" before removing it; leftovers of either are removed at start.
const (
	// GlobalAccount is the account of clients when the server has no
	// accounts configured, as in nats-server; its streams live in
	// <store>/jetstream/$G/streams.
	GlobalAccount = "$G"
	metaFile      = "meta.inf"
	sumFile       = "meta.sum"
	tmpSuffix     = ".tmp"
	msgsDir       = "msgs"
	obsDir        = "obs"
	newSuffix     = ".new"
	delSuffix     = ".del"
	dirPerm       = 0o750
	sumHexChars   = 16
)

// ErrMetaCorrupt is wrapped by every error about a damaged meta.inf or
// meta.sum; test with errors.Is.
var ErrMetaCorrupt = errors.New("jetstream: stream metadata corrupt")

// streamMeta is the content of meta.inf.
type streamMeta struct {
	Created time.Time `json:"Created"`
	api.StreamConfig
}

func marshalConfig(cfg *api.StreamConfig) ([]byte, error) { return json.Marshal(cfg) }

func checksum(b []byte) string {
	s := strconv.FormatUint(xxhash.Sum64(b), 16)
	for len(s) < sumHexChars {
		s = "0" + s
	}
	return s
}

// streamsDir is the directory holding one directory per file stream.
func streamsDir(storeDir, account string) string {
	return filepath.Join(storeDir, "jetstream", account, "streams")
}

// writeFileSync creates name with data and syncs it.
func writeFileSync(fs vfs.FS, name string, data []byte) error {
	f, err := fs.Create(name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

func readFile(fs vfs.FS, name string) ([]byte, error) { return vfs.ReadFile(fs, name, 0) }

// writeMeta durably replaces dir's meta.inf and meta.sum, meta.inf sealed
// by fk (sealed_file.go).
func writeMeta(fs vfs.FS, dir string, m *streamMeta, fk fileSeal) error {
	b, err := encodeMeta(dir, m, fk)
	if err != nil {
		return err
	}
	inf, sum := filepath.Join(dir, metaFile), filepath.Join(dir, sumFile)
	if err := writeFileSync(fs, inf+tmpSuffix, b); err != nil {
		return err
	}
	if err := writeFileSync(fs, sum+tmpSuffix, []byte(checksum(b))); err != nil {
		return err
	}
	if err := fs.Rename(inf+tmpSuffix, inf); err != nil {
		return fmt.Errorf("rename %s: %w", inf+tmpSuffix, err)
	}
	if err := fs.Rename(sum+tmpSuffix, sum); err != nil {
		return fmt.Errorf("rename %s: %w", sum+tmpSuffix, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// encodeMeta returns meta.inf's bytes: the JSON, sealed by fk.
func encodeMeta(dir string, m *streamMeta, fk fileSeal) ([]byte, error) {
	b, err := json.Marshal(m)
	if err == nil {
		b, err = fk.seal(sealMeta, b)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", filepath.Join(dir, metaFile), err)
	}
	return b, nil
}

// writeNewMeta writes meta.inf (sealed by fk) and meta.sum into dir, a
// directory being built under a hidden name, whose rename will make it
// appear: under their own names at once, then the files and dir synced
// together (vfs.SyncAll), as a rename of the whole directory needs. An
// encrypted stream's key file (keyFile, the wrapped data key) is written
// into dir/msgs with them, so the stream appears with its key.
func writeNewMeta(fs vfs.FS, dir string, m *streamMeta, fk fileSeal, keyFile []byte) error {
	b, err := encodeMeta(dir, m, fk)
	if err != nil {
		return err
	}
	var files []vfs.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	type write struct {
		name string
		data []byte
	}
	writes := []write{{metaFile, b}, {sumFile, []byte(checksum(b))}}
	dirs := []string{dir}
	if keyFile != nil {
		writes = append(writes, write{filepath.Join(msgsDir, wal.KeyFileName), keyFile})
		dirs = append(dirs, filepath.Join(dir, msgsDir))
	}
	for _, w := range writes {
		path := filepath.Join(dir, w.name)
		f, err := fs.Create(path)
		if err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		files = append(files, f)
		if _, err := f.Write(w.data); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := vfs.SyncAll(fs, files, dirs); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// readMeta loads and verifies dir's meta.inf, opening it with fk (sealed
// in an encrypted stream), finishing an interrupted update (see the layout
// comment). Every verification failure wraps ErrMetaCorrupt and names the
// file.
func readMeta(fs vfs.FS, dir string, fk fileSeal) (*streamMeta, error) {
	inf, sum := filepath.Join(dir, metaFile), filepath.Join(dir, sumFile)
	b, err := readFile(fs, inf)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s is missing", ErrMetaCorrupt, inf)
		}
		return nil, err
	}
	want := checksum(b)
	got, err := readFile(fs, sum)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if string(got) != want {
		// An update may have stopped between its two renames.
		pending, perr := readFile(fs, sum+tmpSuffix)
		if perr != nil || string(pending) != want {
			if got == nil {
				return nil, fmt.Errorf("%w: %s is missing", ErrMetaCorrupt, sum)
			}
			return nil, fmt.Errorf("%w: %s: checksum %q does not match %s (computed %s)",
				ErrMetaCorrupt, inf, got, sum, want)
		}
		if err := fs.Rename(sum+tmpSuffix, sum); err != nil {
			return nil, fmt.Errorf("rename %s: %w", sum+tmpSuffix, err)
		}
		if err := fs.SyncDir(dir); err != nil {
			return nil, fmt.Errorf("sync dir %s: %w", dir, err)
		}
	}
	// Leftovers of an update that never reached its first rename.
	for _, n := range []string{inf + tmpSuffix, sum + tmpSuffix} {
		if _, err := fs.Stat(n); err == nil {
			if err := fs.Remove(n); err != nil {
				return nil, fmt.Errorf("remove %s: %w", n, err)
			}
		}
	}
	b, err = fk.open(sealMeta, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMetaCorrupt, inf, err)
	}
	var m streamMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMetaCorrupt, inf, err)
	}
	if m.Name != filepath.Base(dir) {
		return nil, fmt.Errorf("%w: %s: stream name %q does not match its directory", ErrMetaCorrupt, inf, m.Name)
	}
	return &m, nil
}
