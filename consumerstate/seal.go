package consumerstate

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/jetwal/jetwal/crypt"
)

// Encryption at rest (Options.Key; doc.go, "Encryption", draws the format).

// flagSealed is set in byte 5 of the header of a sealed log, snapshot or
// catalogue (a byte that is zero in a plain one). Part of the on-disk
// format.
const flagSealed = 1

// Labels that start the associated data of each kind of sealed value, so
// that a value sealed as one kind never opens as another. Part of the
// on-disk format.
const (
	adLog     = "jetwal consumer log v1"
	adState   = "jetwal consumer state v1"
	adMeta    = "jetwal consumer meta v1"
	adCatalog = "jetwal consumer catalog v1"
)

// sealer seals a store's values with its data key. One session (crypt: a
// random salt and a counter) serves every seal of one opened store, so no
// nonce repeats, whatever a crash cut off and was written again: a new
// Open draws a new salt.
type sealer struct {
	key  *crypt.DataKey // nil: the store is plain
	mu   sync.Mutex
	sess *crypt.Session
}

// on reports whether the store seals what it writes.
func (s *sealer) on() bool { return s != nil && s.key != nil }

// seal appends nonce || ciphertext || tag of plain, with associated data
// ad, to dst.
func (s *sealer) seal(dst, plain, ad []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.sess == nil {
			sess, err := s.key.NewSession()
			if err != nil {
				return dst, err
			}
			s.sess = sess
		}
		out, err := s.sess.Seal(dst, plain, ad)
		if !errors.Is(err, crypt.ErrExhausted) {
			return out, err
		}
		s.sess = nil // 2^64 seals: start another session
	}
}

// opener is how a reader treats sealed values. With a key it opens them
// (a value that does not open is damage, as a checksum failure is). With
// none, a sealed file is refused, unless lax: Check without a key checks
// a sealed file's structure and checksums only.
type opener struct {
	key *crypt.DataKey
	lax bool
}

// sealedOK reports whether a file whose header says sealed (or not) may
// be read by o; if not, why (for an ErrCorrupt naming the file).
func (o opener) sealedOK(sealed bool) (bool, string) {
	switch {
	case sealed && o.key == nil && !o.lax:
		return false, "the file is encrypted and no key is configured"
	case !sealed && o.key != nil:
		return false, "the file is not encrypted but the consumer state is"
	}
	return true, ""
}

// logAD is the associated data of the log record at offset off of
// consumer name's log of generation gen.
func logAD(name string, gen uint64, off int64) []byte {
	return posAD(adLog, name, gen, off)
}

// catalogAD is the associated data of the catalogue record at offset off
// of the catalogue of generation gen.
func catalogAD(gen uint64, off int64) []byte {
	return posAD(adCatalog, "", gen, off)
}

func posAD(label, name string, gen uint64, off int64) []byte {
	ad := make([]byte, 0, len(label)+1+len(name)+16)
	ad = append(ad, label...)
	ad = append(ad, 0)
	ad = append(ad, name...)
	ad = binary.LittleEndian.AppendUint64(ad, gen)
	return binary.LittleEndian.AppendUint64(ad, uint64(off))
}

// headerAD is the associated data of a sealed snapshot body or meta.inf:
// the label, the clear header before the sealed value and the consumer's
// name.
func headerAD(label string, hdr []byte, name string) []byte {
	ad := make([]byte, 0, len(label)+1+len(hdr)+len(name))
	ad = append(ad, label...)
	ad = append(ad, 0)
	ad = append(ad, hdr...)
	return append(ad, name...)
}

// decoder turns a record's stored payload into its content: it opens a
// sealed payload (ok false: it does not open, the record is damaged). A
// nil decoder takes the payload as it is.
type decoder func(off int64, payload []byte) ([]byte, bool)

// recordDecoder is the decoder of the records of a file whose header says
// sealed (or not), read through o; ad gives a record's associated data.
// Without a key (lax) a sealed payload is returned as it is, checked by
// its checksum only.
func recordDecoder(o opener, sealed bool, ad func(off int64) []byte) decoder {
	if !sealed || o.key == nil {
		return nil
	}
	return func(off int64, payload []byte) ([]byte, bool) {
		// A fresh buffer: the file's bytes stay as they are for the
		// search for the next good record.
		out, err := o.key.Open(nil, payload, ad(off))
		return out, err == nil
	}
}
