package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/vfs"
)

// A sidecar file keeps state a stream would otherwise rebuild at open by
// reading its messages (dedupe.dat, ttl.dat). Every one has the same frame:
//
//	little endian
//	0   4  magic, one per kind of file
//	4   8  covered: the stream's last sequence the entries account for
//	12  4  n: entries
//	16  .. the entries, in the kind's own encoding
//	end 8  xxhash64 of everything before
//
// It is replaced whole (temp file, fsync, rename, directory fsync), so a
// crash leaves the old file or the new one, never a mix. In an encrypted
// stream the whole frame is stored sealed (sealed_file.go); a sidecar that
// does not open is damaged like one whose checksum fails: the stream
// rebuilds what it held from its messages.
const sidecarHeader = 16

// newSidecar starts a file of kind magic; entries are appended to it.
func newSidecar(magic string, entryBytes int) []byte {
	b := make([]byte, sidecarHeader, sidecarHeader+entryBytes+8)
	copy(b, magic)
	return b
}

// sealSidecar fills in covered and n and appends the checksum.
func sealSidecar(b []byte, covered uint64, n int) []byte {
	binary.LittleEndian.PutUint64(b[4:], covered)
	binary.LittleEndian.PutUint32(b[12:], uint32(n))
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// openSidecar checks b's frame and returns its entries' bytes (from offset
// sidecarHeader of b, so offsets into it are the file's), covered and n.
// Complaints wrap damaged.
func openSidecar(b []byte, magic string, damaged error) (body []byte, covered uint64, n int, err error) {
	if len(b) < sidecarHeader+8 || string(b[:4]) != magic {
		return nil, 0, 0, fmt.Errorf("%w: bad header", damaged)
	}
	body = b[:len(b)-8]
	if xxhash.Sum64(body) != binary.LittleEndian.Uint64(b[len(b)-8:]) {
		return nil, 0, 0, fmt.Errorf("%w: checksum mismatch", damaged)
	}
	return body, binary.LittleEndian.Uint64(body[4:]), int(binary.LittleEndian.Uint32(body[12:])), nil
}

// saveSidecar replaces dir/name with b, sealed by fk as a file of kind.
func saveSidecar(fsys vfs.FS, dir, name string, kind byte, fk fileSeal, b []byte) error {
	path := filepath.Join(dir, name)
	b, err := fk.seal(kind, b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := writeFileSync(fsys, path+tmpSuffix, b); err != nil {
		return err
	}
	if err := fsys.Rename(path+tmpSuffix, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return fsys.SyncDir(dir)
}

// loadSidecar reads dir/name, opens it with fk as a file of kind and hands
// its content to decode. ok is false when there is no usable file: none
// (err nil), or one that does not open or decode refused (err names the
// file and says why; the caller rebuilds from the messages).
func loadSidecar(fsys vfs.FS, dir, name string, kind byte, fk fileSeal, decode func([]byte) (uint64, error)) (covered uint64, ok bool, err error) {
	path := filepath.Join(dir, name)
	b, err := readFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err == nil {
		b, err = fk.open(kind, b)
	}
	if err == nil {
		covered, err = decode(b)
	}
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	return covered, true, nil
}
