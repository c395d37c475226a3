package config

// Encryption at rest. nats-server encrypts JetStream's files when
// jetstream { } gives a key (key, ek or encryption_key; prev_key, prev_ek
// or prev_encryption_key while rotating), optionally a cipher (chachapoly
// or aes), or a TPM to seal the key in (tpm { }). jetwal does not encrypt
// yet, and storing plain text while the file asks for a key would be a
// silent loss of confidentiality, so every one of these fields stops Load.
// The value is never echoed: it is, or leads to, a secret.
//
// This is the one place the refusal lives: when encryption is built,
// remove the implemented names from encryptionFields and parse them in
// applyJetStream (sections.go). Accounts' jetstream blocks take no key in
// nats-server; accountJetStream (accounts.go) refuses any field it does
// not know, these included.

// encryptionFields are jetstream { } fields that configure encryption at
// rest, under every name nats-server v2.15 accepts.
var encryptionFields = []string{
	"key", "ek", "encryption_key",
	"prev_key", "prev_ek", "prev_encryption_key",
	"cipher",
	"tpm",
}

// encryptionRefusal is the sentence of the error.
const encryptionRefusal = "encryption at rest is not built into this jetwal; refusing to start rather than store plain text while a key is configured"

// encryptionRefusals is the jetstream section of refusedFields.
func encryptionRefusals() map[string]refusal {
	m := make(map[string]refusal, len(encryptionFields))
	for _, n := range encryptionFields {
		m[n] = refusal{why: encryptionRefusal}
	}
	return m
}
