package config

import (
	"strings"
)

// Encryption at rest, as nats-server takes it in jetstream { }: a key
// (key, ek or encryption_key), the previous key while rotating (prev_key,
// prev_ek or prev_encryption_key) and the cipher (chachapoly, the
// default, or aes; chacha is taken too). Variables work as anywhere in
// the file, so `key: $JETWAL_KEY` reads the key from the environment. The
// key is never echoed in an error: it is a secret.
//
// tpm { } (sealing the key in a TPM) is refused: jetwal has no TPM
// support, and ignoring it would leave the server without the key the
// operator meant to use. Accounts' jetstream blocks take no key in
// nats-server; accountJetStream (accounts.go) refuses any field it does
// not know, these included.

// Encryption is the encryption setting of jetstream { }. Cipher is as the
// file spells it (crypt.ParseCipher reads it); "" = the default.
type Encryption struct {
	Key, PrevKey, Cipher string
}

// encryptionFields are the refused encryption fields (see above).
var encryptionFields = []string{"tpm"}

// encryptionRefusal is the sentence of the error.
const encryptionRefusal = "jetwal cannot seal the encryption key in a TPM; give the key in jetstream { key } (an environment variable keeps it out of the file)"

// encryptionRefusals is the jetstream section of refusedFields.
func encryptionRefusals() map[string]refusal {
	m := make(map[string]refusal, len(encryptionFields))
	for _, n := range encryptionFields {
		m[n] = refusal{why: encryptionRefusal}
	}
	return m
}

// applyEncryption reads one encryption field of jetstream { }; it reports
// whether k is one.
func (c *Config) applyEncryption(k, n string, v value) (bool, error) {
	e := &c.JetStream.Encryption
	switch lower(k) {
	case "key", "ek", "encryption_key":
		s, err := c.secret(n, v)
		e.Key = s
		return true, err
	case "prev_key", "prev_ek", "prev_encryption_key":
		s, err := c.secret(n, v)
		e.PrevKey = s
		return true, err
	case "cipher":
		s, err := v.str(n)
		if err != nil {
			return true, err
		}
		switch strings.ToLower(s) {
		case "chachapoly", "chacha", "aes":
			e.Cipher = strings.ToLower(s)
			return true, nil
		}
		return true, v.errorf("%s: %q: want chachapoly or aes", n, s)
	}
	return false, nil
}

// secret reads a key: a non-empty string (a number is taken as its text,
// as the parser reads an unquoted key of digits), never shown in errors.
func (c *Config) secret(n string, v value) (string, error) {
	var s string
	switch x := v.v.(type) {
	case string:
		s = x
	case int64:
		return "", v.errorf("%s: the key reads as a number; quote it", n)
	default:
		return "", v.errorf("%s: expected a string key, got %s", n, describe(v.v))
	}
	if strings.TrimSpace(s) == "" {
		return "", v.errorf("%s: empty key", n)
	}
	return s, nil
}
