package crypt

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/jetwal/jetwal/vfs"
	"golang.org/x/crypto/chacha20poly1305"
)

var ciphers = []Cipher{ChaCha, AES}

func TestSealOpen(t *testing.T) {
	for _, c := range ciphers {
		t.Run(c.String(), func(t *testing.T) {
			dk, err := NewDataKey(c)
			if err != nil {
				t.Fatal(err)
			}
			s, err := dk.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			plain := []byte("orders.new hello world")
			ad := []byte("seq=5")
			sealed, err := s.Seal(nil, plain, ad)
			if err != nil {
				t.Fatal(err)
			}
			if len(sealed) != len(plain)+Overhead {
				t.Fatalf("sealed %d bytes, want %d", len(sealed), len(plain)+Overhead)
			}
			if bytes.Contains(sealed, plain) {
				t.Fatal("plaintext visible in sealed value")
			}
			got, err := dk.Open(nil, sealed, ad)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("open: %q, %v", got, err)
			}
			// Wrong associated data, a flipped byte anywhere, another key,
			// a truncation: all ErrAuth.
			if _, err := dk.Open(nil, sealed, []byte("seq=6")); !errors.Is(err, ErrAuth) {
				t.Fatalf("wrong ad: %v", err)
			}
			for i := range sealed {
				b := bytes.Clone(sealed)
				b[i] ^= 0x40
				if _, err := dk.Open(nil, b, ad); !errors.Is(err, ErrAuth) {
					t.Fatalf("flipped byte %d opened: %v", i, err)
				}
			}
			other, _ := NewDataKey(c)
			if _, err := other.Open(nil, sealed, ad); !errors.Is(err, ErrAuth) {
				t.Fatalf("other key: %v", err)
			}
			if _, err := dk.Open(nil, sealed[:Overhead-1], ad); !errors.Is(err, ErrAuth) {
				t.Fatalf("short: %v", err)
			}
			// In place, both ways.
			buf := make([]byte, len(plain)+Overhead)
			copy(buf[NonceSize:], plain)
			sv, err := s.SealInPlace(buf, len(plain), ad)
			if err != nil {
				t.Fatal(err)
			}
			out, err := dk.Open(sv[NonceSize:NonceSize], sv, ad)
			if err != nil || !bytes.Equal(out, plain) || &out[0] != &sv[NonceSize] {
				t.Fatalf("in place: %q %v", out, err)
			}
		})
	}
}

// TestSessionNonces: nonces of one session never repeat; two sessions
// differ in their salt.
func TestSessionNonces(t *testing.T) {
	for _, c := range ciphers {
		dk, _ := NewDataKey(c)
		seen := map[string]bool{}
		for range 3 {
			s, err := dk.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			for range 1000 {
				v, err := s.Seal(nil, []byte("x"), nil)
				if err != nil {
					t.Fatal(err)
				}
				n := string(Nonce(v))
				if seen[n] {
					t.Fatalf("%v: nonce repeated", c)
				}
				seen[n] = true
			}
		}
	}
}

func TestSessionExhausted(t *testing.T) {
	dk, _ := NewDataKey(ChaCha)
	s, _ := dk.NewSession()
	s.ctr = ^uint64(0)
	if _, err := s.Seal(nil, []byte("x"), nil); !errors.Is(err, ErrExhausted) {
		t.Fatalf("got %v", err)
	}
	if _, err := s.SealInPlace(make([]byte, 64), 1, nil); !errors.Is(err, ErrExhausted) {
		t.Fatalf("got %v", err)
	}
}

func TestParseCipher(t *testing.T) {
	for in, want := range map[string]Cipher{"": ChaCha, "chachapoly": ChaCha, "ChaCha": ChaCha, "aes": AES, "AES": AES} {
		if got, err := ParseCipher(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseCipher("rot13"); err == nil {
		t.Error("rot13 accepted")
	}
}

func TestKeyFile(t *testing.T) {
	for _, c := range ciphers {
		t.Run(c.String(), func(t *testing.T) {
			fs := vfs.NewMemFS()
			dir := "/s"
			fs.MkdirAll(dir, 0o755)
			path := filepath.Join(dir, "key")
			dk, _ := NewDataKey(c)
			if err := WriteKeyFile(fs, path, dk, "k1"); err != nil {
				t.Fatal(err)
			}
			got, rewrap, err := ReadKeyFile(fs, path, Config{Key: "k1"})
			if err != nil || rewrap || got.key != dk.key || got.c != c {
				t.Fatalf("read: %v %v", rewrap, err)
			}
			// Wrong key: a mismatch, not damage.
			_, _, err = ReadKeyFile(fs, path, Config{Key: "k2"})
			if !errors.Is(err, ErrKeyMismatch) || errors.Is(err, ErrCorrupt) {
				t.Fatalf("wrong key: %v", err)
			}
			// Rotation: the new key fails, the previous one opens it.
			got, rewrap, err = ReadKeyFile(fs, path, Config{Key: "k2", PrevKey: "k1"})
			if err != nil || !rewrap || got.key != dk.key {
				t.Fatalf("prev: %v %v", rewrap, err)
			}
			if _, _, err := ReadKeyFile(fs, path, Config{Key: "k3", PrevKey: "k4"}); !errors.Is(err, ErrKeyMismatch) {
				t.Fatalf("neither: %v", err)
			}
			if cc, err := CheckKeyFile(fs, path); err != nil || cc != c {
				t.Fatalf("check: %v %v", cc, err)
			}
			// Every flipped byte: damage (checksum), never a mismatch
			// or a key.
			b, _ := readAll(fs, path)
			for i := range b {
				d := bytes.Clone(b)
				d[i] ^= 1
				if _, err := UnmarshalKey(path, d, "k1"); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d flipped: %v", i, err)
				}
			}
			// Two writes of the same key differ (fresh salt and nonce).
			b2, _ := MarshalKey(dk, "k1")
			if bytes.Equal(b[kfSalt:], b2[kfSalt:]) {
				t.Fatal("key file written twice with the same salt")
			}
		})
	}
}

func FuzzOpenSealed(f *testing.F) {
	dk, _ := dataKeyFrom(ChaCha, bytes.Repeat([]byte{7}, KeySize))
	ak, _ := dataKeyFrom(AES, bytes.Repeat([]byte{7}, KeySize))
	s, _ := dk.NewSession()
	v, _ := s.Seal(nil, []byte("hello"), []byte("ad"))
	f.Add(v, []byte("ad"), false)
	as, _ := ak.NewSession()
	v, _ = as.Seal(nil, []byte("hello"), []byte("ad"))
	f.Add(v, []byte("ad"), true)
	f.Add([]byte{}, []byte{}, false)
	f.Fuzz(func(t *testing.T, sealed, ad []byte, useAES bool) {
		k := dk
		if useAES {
			k = ak
		}
		out, err := k.Open(nil, sealed, ad)
		if err == nil && len(out) != len(sealed)-Overhead {
			t.Fatalf("opened %d bytes from %d", len(out), len(sealed))
		}
		if err != nil && !errors.Is(err, ErrAuth) {
			t.Fatalf("unexpected error %v", err)
		}
		// In place must not panic either.
		if len(sealed) >= NonceSize {
			k.Open(sealed[NonceSize:NonceSize], sealed, ad)
		}
		_, _ = UnmarshalKey("f", sealed, string(ad))
	})
}

// TestChaChaIsXChaCha: what a ChaCha session seals (a subkey per session)
// is exactly XChaCha20-Poly1305 under the data key with the stored nonce,
// as doc.go claims.
func TestChaChaIsXChaCha(t *testing.T) {
	dk, _ := NewDataKey(ChaCha)
	s, _ := dk.NewSession()
	x, err := chacha20poly1305.NewX(dk.key[:])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		plain := bytes.Repeat([]byte{byte(i)}, 100*i)
		v, _ := s.Seal(nil, plain, []byte("ad"))
		got, err := x.Open(nil, v[:NonceSize], v[NonceSize:], []byte("ad"))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("seal %d is not XChaCha20-Poly1305: %v", i, err)
		}
	}
}
