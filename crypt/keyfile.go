package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"golang.org/x/crypto/chacha20poly1305"
)

// Key file format constants (part of the on-disk format; doc.go draws it).
const (
	KeyFileMagic   = "JWKY"
	KeyFileVersion = 1
	KeyFileSize    = 120
	kfSalt         = 8
	kfNonce        = 40
	kfSealed       = 64
	kfSum          = 112
)

// ErrKeyMismatch is returned when a key file is intact but opens with
// neither configured key.
var ErrKeyMismatch = errors.New("the encryption key does not match")

// ErrCorrupt is the engine's corruption sentinel: a damaged key file.
var ErrCorrupt = store.ErrCorrupt

// Config is the configured encryption: nats-server's `jetstream { key,
// cipher, prev_key }`. The zero value (no Key) means no encryption.
type Config struct {
	Key     string // the configured key; "" turns encryption off
	PrevKey string // the key being rotated away from, if any
	Cipher  Cipher // for new streams; None means ChaCha
}

// Enabled reports whether a key is configured.
func (c Config) Enabled() bool { return c.Key != "" }

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.Key == "" && c.PrevKey != "" {
		return errors.New("crypt: prev_key without key")
	}
	if c.Cipher != None && !c.Cipher.valid() {
		return fmt.Errorf("crypt: unknown cipher %d", uint8(c.Cipher))
	}
	return nil
}

// NewKey draws a data key of the configured cipher (ChaCha if none).
func (c Config) NewKey() (*DataKey, error) {
	ci := c.Cipher
	if ci == None {
		ci = ChaCha
	}
	return NewDataKey(ci)
}

// kek derives the key-encryption key of a key file from the configured
// key and the file's salt (doc.go).
func kek(key string, salt []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, []byte(key), salt, "jetwal key-encryption key v1", KeySize)
}

func wrapAEAD(c Cipher, kek []byte) (cipher.AEAD, int, error) {
	switch c {
	case ChaCha:
		a, err := chacha20poly1305.NewX(kek)
		return a, chacha20poly1305.NonceSizeX, err
	case AES:
		b, err := aes.NewCipher(kek)
		if err != nil {
			return nil, 0, err
		}
		g, err := cipher.NewGCM(b)
		return g, 12, err
	}
	return nil, 0, fmt.Errorf("crypt: unknown cipher %d", uint8(c))
}

// MarshalKey returns the key file bytes of dk wrapped by key, with a fresh
// salt and nonce.
func MarshalKey(dk *DataKey, key string) ([]byte, error) {
	if key == "" {
		return nil, errors.New("crypt: wrap with an empty key")
	}
	b := make([]byte, KeyFileSize)
	copy(b, KeyFileMagic)
	b[4] = KeyFileVersion
	b[5] = byte(dk.c)
	if _, err := rand.Read(b[kfSalt:kfSealed]); err != nil { // salt and nonce
		return nil, fmt.Errorf("crypt: random salt: %w", err)
	}
	k, err := kek(key, b[kfSalt:kfNonce])
	if err != nil {
		return nil, fmt.Errorf("crypt: derive key: %w", err)
	}
	a, ns, err := wrapAEAD(dk.c, k)
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	a.Seal(b[kfSealed:kfSealed], b[kfNonce:kfNonce+ns], dk.key[:], b[:kfSealed])
	binary.LittleEndian.PutUint64(b[kfSum:], xxhash.Sum64(b[:kfSum]))
	return b, nil
}

// UnmarshalKey opens key file bytes with key. name is the file's path, for
// errors. A damaged file is an error wrapping ErrCorrupt; an intact file
// wrapped by another key, one wrapping ErrKeyMismatch.
func UnmarshalKey(name string, b []byte, key string) (*DataKey, error) {
	if err := checkKeyFile(name, b); err != nil {
		return nil, err
	}
	k, err := kek(key, b[kfSalt:kfNonce])
	if err != nil {
		return nil, fmt.Errorf("crypt: derive key: %w", err)
	}
	c := Cipher(b[5])
	a, ns, err := wrapAEAD(c, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw, err := a.Open(nil, b[kfNonce:kfNonce+ns], b[kfSealed:kfSum], b[:kfSealed])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, ErrKeyMismatch)
	}
	return dataKeyFrom(c, raw)
}

// checkKeyFile checks a key file's structure and checksum (no key needed).
func checkKeyFile(name string, b []byte) error {
	bad := func(off int, why string) error {
		return fmt.Errorf("%s: offset %d: %s: %w", name, off, why, ErrCorrupt)
	}
	if len(b) != KeyFileSize {
		return bad(0, fmt.Sprintf("key file of %d bytes, want %d", len(b), KeyFileSize))
	}
	if want, got := binary.LittleEndian.Uint64(b[kfSum:]), xxhash.Sum64(b[:kfSum]); want != got {
		return bad(kfSum, fmt.Sprintf("key file checksum mismatch (stored %016x, computed %016x)", want, got))
	}
	if string(b[:4]) != KeyFileMagic {
		return bad(0, fmt.Sprintf("bad magic %q", b[:4]))
	}
	if b[4] != KeyFileVersion {
		return bad(4, fmt.Sprintf("unsupported key file version %d", b[4]))
	}
	if !Cipher(b[5]).valid() {
		return bad(5, fmt.Sprintf("unknown cipher %d", b[5]))
	}
	return nil
}

// CheckKeyFile reads the key file at path and checks its structure and
// checksum without a key (jetwal verify).
func CheckKeyFile(fs vfs.FS, path string) (Cipher, error) {
	b, err := readAll(fs, path)
	if err != nil {
		return None, err
	}
	if err := checkKeyFile(path, b); err != nil {
		return None, err
	}
	return Cipher(b[5]), nil
}

// ReadKeyFile opens the key file at path with cfg.Key, or failing that
// with cfg.PrevKey. rewrap reports that it opened with the previous key:
// the caller should write it again with the new one (WriteKeyFile). A
// missing file is an error satisfying errors.Is(err, fs.ErrNotExist)
// (as the FS reports it).
func ReadKeyFile(fs vfs.FS, path string, cfg Config) (dk *DataKey, rewrap bool, err error) {
	b, err := readAll(fs, path)
	if err != nil {
		return nil, false, err
	}
	dk, err = UnmarshalKey(path, b, cfg.Key)
	if err == nil || !errors.Is(err, ErrKeyMismatch) || cfg.PrevKey == "" {
		return dk, false, err
	}
	if dk, perr := UnmarshalKey(path, b, cfg.PrevKey); perr == nil {
		return dk, true, nil
	}
	return nil, false, fmt.Errorf("%s: %w (neither key nor prev_key opens it)", path, ErrKeyMismatch)
}

// WriteKeyFile writes dk wrapped by key to path atomically: a temp file
// (path + ".tmp"), fsynced, renamed over path, the directory fsynced. A
// crash leaves the previous file or the new one.
func WriteKeyFile(fs vfs.FS, path string, dk *DataKey, key string) error {
	b, err := MarshalKey(dk, key)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("crypt: create %s: %w", tmp, err)
	}
	_, err = f.WriteAt(b, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err == nil {
		err = fs.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("crypt: write key file %s: %w", path, err)
	}
	return nil
}

// readAll reads a key file, refusing one too large to be one as damage.
func readAll(fs vfs.FS, path string) ([]byte, error) {
	b, err := vfs.ReadFile(fs, path, 1<<20)
	if errors.Is(err, vfs.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", err, ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	return b, nil
}
