package consumerstate

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
)

// fileHeaderSize is the size of the header the catalogue and the state
// logs begin with: a 4-byte magic, a version byte, a flags byte
// (flagSealed), two reserved zero bytes, the generation (8 bytes) and the
// xxhash64 of bytes 0-15. Part of the on-disk format (see doc.go).
const fileHeaderSize = 24

// fileHeader returns the header of a file with the given magic and
// version for generation gen, flagged sealed when its records are.
func fileHeader(magic string, version byte, gen uint64, sealed bool) []byte {
	h := make([]byte, fileHeaderSize)
	copy(h, magic)
	h[4] = version
	if sealed {
		h[5] = flagSealed
	}
	binary.LittleEndian.PutUint64(h[8:], gen)
	binary.LittleEndian.PutUint64(h[16:], xxhash.Sum64(h[:16]))
	return h
}

// parseFileHeader checks the header fileHeader writes at the start of
// data (what names the kind of file in errors: "catalogue", "log") and
// returns its generation and whether its records are sealed, refusing
// sealed records o cannot read.
func parseFileHeader(data []byte, path, what, magic string, version byte, o opener) (gen uint64, sealed bool, err error) {
	if len(data) < fileHeaderSize {
		return 0, false, corruptf("%s: offset 0: %d bytes, shorter than the %d-byte %s header", path, len(data), fileHeaderSize, what)
	}
	if string(data[0:4]) != magic {
		return 0, false, corruptf("%s: offset 0: bad %s magic %q", path, what, data[0:4])
	}
	if got, want := binary.LittleEndian.Uint64(data[16:24]), xxhash.Sum64(data[:16]); got != want {
		return 0, false, corruptf("%s: offset 16: %s header checksum %016x, computed %016x", path, what, got, want)
	}
	if data[4] != version {
		return 0, false, corruptf("%s: offset 4: unsupported %s version %d", path, what, data[4])
	}
	if data[5]&^flagSealed|data[6]|data[7] != 0 {
		return 0, false, corruptf("%s: offset 5: reserved bytes not zero", path)
	}
	sealed = data[5] == flagSealed
	if ok, why := o.sealedOK(sealed); !ok {
		return 0, false, corruptf("%s: offset 5: %s", path, why)
	}
	return binary.LittleEndian.Uint64(data[8:16]), sealed, nil
}
