package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// Cipher is the AEAD a stream's data key uses. Its values are part of the
// on-disk format (the key file's cipher byte).
type Cipher uint8

const (
	// None: no encryption (the zero value).
	None Cipher = 0
	// ChaCha is XChaCha20-Poly1305 (golang.org/x/crypto/chacha20poly1305),
	// nats-server's default cipher (`cipher: chachapoly`).
	ChaCha Cipher = 1
	// AES is AES-256-GCM (crypto/aes, crypto/cipher) with a subkey per
	// session (doc.go).
	AES Cipher = 2
)

// Sizes of a sealed value's parts (part of the on-disk format).
const (
	KeySize   = 32
	NonceSize = 24
	TagSize   = 16
	// Overhead is what sealing adds to a value: nonce and tag.
	Overhead = NonceSize + TagSize
	saltSize = 16
)

// ErrAuth is returned when a sealed value does not open: its bytes, its
// associated data or the key differ from those it was sealed with.
var ErrAuth = errors.New("crypt: message authentication failed")

// ParseCipher parses a cipher name as nats-server's configuration spells
// it: "chachapoly" or "chacha" (also "xchacha20-poly1305"), "aes" (also
// "aes-gcm"), case-insensitive. The empty string is ChaCha, nats-server's
// default.
func ParseCipher(s string) (Cipher, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "chachapoly", "chacha", "chacha20", "xchacha20-poly1305", "chacha20-poly1305":
		return ChaCha, nil
	case "aes", "aes-gcm", "aes-256-gcm":
		return AES, nil
	}
	return None, fmt.Errorf("crypt: unknown cipher %q (want chachapoly or aes)", s)
}

func (c Cipher) String() string {
	switch c {
	case None:
		return "none"
	case ChaCha:
		return "ChaCha20-Poly1305"
	case AES:
		return "AES-GCM"
	}
	return fmt.Sprintf("cipher(%d)", uint8(c))
}

func (c Cipher) valid() bool { return c == ChaCha || c == AES }

// DataKey is a stream's data key. Opening is safe for concurrent use;
// sealing goes through a Session, which is not.
type DataKey struct {
	c   Cipher
	key [KeySize]byte
	// subs caches the AEAD of each session subkey used to open, by salt
	// ([saltSize]byte -> cipher.AEAD), so that reading records derives a
	// session's subkey once; nsubs bounds it (a store opens records of a
	// few sessions per segment).
	subs  sync.Map
	nsubs atomic.Int32
}

// maxSubs bounds the subkey cache; past it the cache starts over.
const maxSubs = 4096

// NewDataKey draws a random data key for cipher c.
func NewDataKey(c Cipher) (*DataKey, error) {
	var k [KeySize]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, fmt.Errorf("crypt: random data key: %w", err)
	}
	return dataKeyFrom(c, k[:])
}

// dataKeyFrom makes a DataKey of cipher c from 32 key bytes.
func dataKeyFrom(c Cipher, k []byte) (*DataKey, error) {
	if !c.valid() {
		return nil, fmt.Errorf("crypt: unknown cipher %d", uint8(c))
	}
	if len(k) != KeySize {
		return nil, fmt.Errorf("crypt: data key of %d bytes, want %d", len(k), KeySize)
	}
	dk := &DataKey{c: c}
	copy(dk.key[:], k)
	return dk, nil
}

// Cipher is the key's cipher.
func (k *DataKey) Cipher() Cipher { return k.c }

// newSubkey returns the AEAD, with 12-byte nonces, of the session whose
// salt is given. For ChaCha it is ChaCha20-Poly1305 under HChaCha20(key,
// salt): XChaCha20-Poly1305 with the 24-byte nonce salt || counter is by
// definition ChaCha20-Poly1305 under that subkey with the nonce 0000 ||
// counter, so deriving it once per session, not once per record, stores
// exactly what XChaCha20-Poly1305 would. For AES it is AES-256-GCM under
// HMAC-SHA256(key, label || salt) (doc.go).
func (k *DataKey) newSubkey(salt []byte) (cipher.AEAD, error) {
	switch k.c {
	case ChaCha:
		sub, err := chacha20.HChaCha20(k.key[:], salt)
		if err != nil {
			return nil, fmt.Errorf("crypt: %w", err)
		}
		a, err := chacha20poly1305.New(sub)
		if err != nil {
			return nil, fmt.Errorf("crypt: %w", err)
		}
		return a, nil
	case AES:
		m := hmac.New(sha256.New, k.key[:])
		m.Write([]byte("jetwal aes-gcm subkey v1"))
		m.Write(salt)
		blk, err := aes.NewCipher(m.Sum(nil))
		if err != nil {
			return nil, fmt.Errorf("crypt: %w", err)
		}
		g, err := cipher.NewGCM(blk)
		if err != nil {
			return nil, fmt.Errorf("crypt: %w", err)
		}
		return g, nil
	}
	return nil, fmt.Errorf("crypt: unknown cipher %d", uint8(k.c))
}

// subkey is newSubkey through the cache.
func (k *DataKey) subkey(salt []byte) (cipher.AEAD, error) {
	var key [saltSize]byte
	copy(key[:], salt)
	if a, ok := k.subs.Load(key); ok {
		return a.(cipher.AEAD), nil
	}
	a, err := k.newSubkey(salt)
	if err != nil {
		return nil, err
	}
	if k.nsubs.Add(1) > maxSubs {
		k.subs.Clear()
		k.nsubs.Store(1)
	}
	k.subs.Store(key, a)
	return a, nil
}

// Open authenticates and decrypts sealed (nonce || ciphertext || tag, as a
// Session sealed it with the same associated data ad) and appends the
// plaintext to dst. To decrypt in place, pass sealed[NonceSize:NonceSize]
// as dst: the plaintext then starts NonceSize bytes into sealed. It returns
// ErrAuth when the value does not open.
func (k *DataKey) Open(dst, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < Overhead {
		return dst, ErrAuth
	}
	nonce, ct := sealed[:NonceSize], sealed[NonceSize:]
	if unsafeBuffers(dst, len(ct), ct, ad) || anyOverlap(outRegion(dst, len(ct)), nonce) {
		// Overlaps the AEAD would refuse: open into a fresh buffer.
		out, err := k.Open(nil, append([]byte(nil), sealed...), append([]byte(nil), ad...))
		if err != nil {
			return dst, err
		}
		return append(dst, out...), nil
	}
	a, err := k.subkey(nonce[:saltSize])
	if err != nil {
		return dst, err
	}
	var n [12]byte
	copy(n[4:], nonce[saltSize:])
	out, err := a.Open(dst, n[:], ct, ad)
	if err != nil {
		return dst, ErrAuth
	}
	return out, nil
}

// Session seals values with nonces that never repeat (doc.go): a random
// salt drawn at its start and a counter. It is not safe for concurrent
// use; the owner serialises its seals.
type Session struct {
	k    *DataKey
	salt [saltSize]byte
	ctr  uint64
	aead cipher.AEAD // under the session subkey (newSubkey)
}

// NewSession starts a session with a fresh random salt.
func (k *DataKey) NewSession() (*Session, error) {
	s := &Session{k: k}
	if _, err := rand.Read(s.salt[:]); err != nil {
		return nil, fmt.Errorf("crypt: random session salt: %w", err)
	}
	a, err := k.newSubkey(s.salt[:])
	if err != nil {
		return nil, err
	}
	s.aead = a
	return s, nil
}

// ErrExhausted is returned by a session whose counter is used up (2^64
// seals); start a new one.
var ErrExhausted = errors.New("crypt: session nonce counter exhausted")

// Seal appends nonce || ciphertext || tag of plain with associated data ad
// to dst. plain and dst must not overlap unless dst[len(dst):] is exactly
// where plain starts minus NonceSize (see SealInPlace).
func (s *Session) Seal(dst, plain, ad []byte) ([]byte, error) {
	if s.ctr == ^uint64(0) {
		return dst, ErrExhausted
	}
	if unsafeBuffers(dst, len(plain)+Overhead, plain, ad) {
		// Overlaps the AEAD would refuse: seal from copies.
		return s.Seal(dst, append([]byte(nil), plain...), append([]byte(nil), ad...))
	}
	ctr := s.ctr
	s.ctr++
	dst = append(dst, s.salt[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, ctr)
	var n [12]byte
	binary.LittleEndian.PutUint64(n[4:], ctr)
	return s.aead.Seal(dst, n[:], plain, ad), nil
}

// SealInPlace seals the plaintext at buf[NonceSize:NonceSize+n] where it
// lies: buf must have room for the nonce before it and the tag after it
// (len(buf) >= n + Overhead). It returns buf[:n+Overhead], the sealed value.
func (s *Session) SealInPlace(buf []byte, n int, ad []byte) ([]byte, error) {
	if n < 0 || len(buf) < n+Overhead {
		return nil, fmt.Errorf("crypt: seal in place: buffer of %d bytes for %d bytes of plaintext", len(buf), n)
	}
	if s.ctr == ^uint64(0) {
		return nil, ErrExhausted
	}
	ctr := s.ctr
	s.ctr++
	copy(buf, s.salt[:])
	binary.LittleEndian.PutUint64(buf[saltSize:], ctr)
	plain := buf[NonceSize : NonceSize+n]
	if anyOverlap(buf[:n+Overhead], ad) {
		ad = append([]byte(nil), ad...)
	}
	var nn [12]byte
	binary.LittleEndian.PutUint64(nn[4:], ctr)
	s.aead.Seal(plain[:0], nn[:], plain, ad)
	return buf[:n+Overhead], nil
}

// Nonce returns the nonce of a sealed value (nil if it is too short): for
// tests and tools that check nonces never repeat.
func Nonce(sealed []byte) []byte {
	if len(sealed) < Overhead {
		return nil
	}
	return sealed[:NonceSize]
}
