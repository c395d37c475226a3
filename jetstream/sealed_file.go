package jetstream

import (
	"errors"
	"fmt"

	"github.com/jetwal/jetwal/crypt"
)

// Encryption at rest of the files this package writes in a stream's
// directory (meta.inf, dedupe.dat, ttl.dat; doc.go says which key and why).
// In an encrypted stream each is stored sealed, whole:
//
//	little endian
//	0   4   magic "JWSF"
//	4   1   version, 1
//	5   1   kind: 1 meta.inf, 2 dedupe.dat, 3 ttl.dat
//	6   2   reserved, zero
//	8   ..  nonce (24) || the plain file's bytes encrypted || tag (16)
//
// sealed with the stream's data key (crypt) and the associated data
//
//	bytes [0, 8) || "jetwal jetstream file v1" || 0 || kind's name || 0 || stream name
//
// so a sealed file opens only as the kind of file and in the stream it was
// written for: a meta.inf swapped for another stream's, or a dedupe.dat
// renamed ttl.dat, fails like a damaged one. Each file is sealed by a
// session of its own (a fresh random salt: crypt/doc.go), so no nonce
// repeats however often a file is rewritten or a crash cut a write short.
// The plain content is the file as a plain stream stores it (JSON, the
// sidecar frame with its checksum), so opening a sealed file yields the
// bytes the plain decoder reads. In a plain stream the files are exactly
// as before: the zero fileSeal writes and reads them unchanged.
//
// meta.sum holds the checksum of meta.inf's stored bytes, sealed or not,
// so `jetwal verify` checks a sealed meta.inf against it without the key.
const (
	sealedMagic   = "JWSF"
	sealedVersion = 1
	sealedHeader  = 8

	sealMeta   byte = 1
	sealDedupe byte = 2
	sealTTL    byte = 3
)

func sealKindName(kind byte) string {
	switch kind {
	case sealMeta:
		return metaFile
	case sealDedupe:
		return dedupeFile
	case sealTTL:
		return ttlFile
	}
	return fmt.Sprintf("kind %d", kind)
}

// errSealed is wrapped by every complaint about a sealed file that does
// not open: damaged, written for another file or stream, or sealed with
// another key.
var errSealed = errors.New("sealed file does not open (damaged, or not this stream's)")

// fileSeal seals and opens a stream's own files. The zero value is a plain
// stream's: files are written and read as they are.
type fileSeal struct {
	dk     *crypt.DataKey // nil: plain
	stream string
}

// encrypted reports whether the stream's files are sealed.
func (f fileSeal) encrypted() bool { return f.dk != nil }

func (f fileSeal) ad(hdr []byte, kind byte) []byte {
	ad := make([]byte, 0, sealedHeader+32+len(f.stream))
	ad = append(ad, hdr[:sealedHeader]...)
	ad = append(ad, "jetwal jetstream file v1"...)
	ad = append(ad, 0)
	ad = append(ad, sealKindName(kind)...)
	ad = append(ad, 0)
	return append(ad, f.stream...)
}

// seal returns what is stored for a file of kind with plain as its content:
// plain itself in a plain stream.
func (f fileSeal) seal(kind byte, plain []byte) ([]byte, error) {
	if f.dk == nil {
		return plain, nil
	}
	sess, err := f.dk.NewSession()
	if err != nil {
		return nil, err
	}
	b := make([]byte, sealedHeader, sealedHeader+len(plain)+crypt.Overhead)
	copy(b, sealedMagic)
	b[4], b[5] = sealedVersion, kind
	return sess.Seal(b, plain, f.ad(b, kind))
}

// open returns the content of a stored file of kind. A sealed file in a
// plain stream, or a plain one in an encrypted stream, is refused: the
// encryption of a stream is decided when it is created and every file of
// it follows. Complaints wrap errSealed; the caller names the file.
func (f fileSeal) open(kind byte, b []byte) ([]byte, error) {
	sealed := len(b) >= sealedHeader && string(b[:4]) == sealedMagic
	switch {
	case f.dk == nil && !sealed:
		return b, nil
	case f.dk == nil:
		return nil, fmt.Errorf("%w: the file is encrypted but the stream has no key file", errSealed)
	case !sealed:
		return nil, fmt.Errorf("%w: the stream is encrypted but the file is not sealed", errSealed)
	case b[4] != sealedVersion || b[6]|b[7] != 0:
		return nil, fmt.Errorf("%w: offset 4: unknown version %d or reserved bytes set", errSealed, b[4])
	case b[5] != kind:
		return nil, fmt.Errorf("%w: offset 5: sealed as %s, read as %s", errSealed, sealKindName(b[5]), sealKindName(kind))
	}
	plain, err := f.dk.Open(nil, b[sealedHeader:], f.ad(b, kind))
	if err != nil {
		return nil, fmt.Errorf("%w: offset %d: %v", errSealed, sealedHeader, err)
	}
	return plain, nil
}
