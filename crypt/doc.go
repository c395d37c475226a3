// Package crypt is jetwal's encryption at rest: the ciphers, the key a
// stream's bytes are sealed with, and the key file that keeps that key
// wrapped by the configured one. It sits at the bottom of the layering,
// beside vfs, and imports of jetwal only vfs and store (for ErrCorrupt).
//
// # Keys
//
// The operator configures a key string (nats-server's `jetstream { key }`)
// and, during a rotation, the previous one (`prev_key`). That string never
// encrypts data. Each stream has a data key: 32 random bytes drawn when the
// stream is created, stored in the stream's key file wrapped (AEAD-sealed)
// by a key-encryption key (KEK) derived from the configured string:
//
//	KEK = HKDF-SHA256(secret = configured key, salt = the file's 32-byte
//	      random salt, info = "jetwal key-encryption key v1")
//
// nats-server derives its key-encryption keys with one HMAC-SHA256 of the
// stream's name keyed by the configured string. HKDF (RFC 5869, the
// standard library's crypto/hkdf) is the same primitive used as a KDF is
// meant to be used: extract with a salt, then expand with a label. The salt
// is random per key file and replaced each time the file is written, so
// the same configured key yields a different KEK for every stream and
// every write, and a KEK seals exactly one data key. Like nats-server's,
// this derivation is fast: it does not slow down guessing a weak key, so
// the configured key should be a long random string, not a password (a
// memory-hard KDF would cost every stream open tens of milliseconds).
//
// Rotating the configured key rewraps the data key (a new key file, the
// same data key), so no message is rewritten; the data itself never
// changes key. A wrong key is told apart from a damaged file: the file
// carries an xxhash64 of all its bytes, so a file whose checksum holds but
// whose seal does not open was wrapped by another key (ErrKeyMismatch),
// while a checksum failure is damage (ErrCorrupt).
//
// # Key file (little endian, 120 bytes)
//
//	offset size field
//	0      4    magic "JWKY"
//	4      1    format version (1)
//	5      1    cipher of the data key and of the wrapping (1 XChaCha20-
//	            Poly1305, 2 AES-256-GCM)
//	6      2    reserved, zero
//	8      32   salt of the KEK derivation
//	40     24   nonce of the wrapping (AES-256-GCM uses the first 12)
//	64     48   data key sealed by the KEK (32 bytes + 16-byte tag), with
//	            bytes [0, 64) as associated data
//	112    8    xxhash64 of bytes [0, 112)
//
// The associated data binds the cipher id, version and salt to the sealed
// key: changing any of them makes the seal fail. WriteKeyFile writes a temp
// file, fsyncs it, renames it over the key file and fsyncs the directory,
// so a crash leaves the old file or the new one, never a mix.
//
// # Sealing records
//
// A sealed value is nonce (24 bytes) || ciphertext || tag (16 bytes): 40
// bytes of overhead (Overhead). The caller passes associated data that
// binds the value to where it belongs (package segment: the record's clear
// fields and its segment's base; package index: the checkpoint section and
// chunk number), so a sealed value moved elsewhere does not open.
//
// # Nonces never repeat under one data key
//
// A nonce derived from a record's position would repeat after a crash:
// recovery truncates a torn tail and the next records are written at the
// same offsets with different contents. jetwal's nonces depend on no
// position. Sealing happens in a Session; a session draws a 16-byte salt
// from crypto/rand when it starts and numbers its seals with a 64-bit
// counter held in memory. The nonce of a seal is salt || counter:
//
//   - XChaCha20-Poly1305 takes the 24-byte nonce as is (its first 16 bytes
//     select an HChaCha20 subkey, the last 8 are the ChaCha20 nonce). The
//     subkey depends on the salt only, so a session derives it once and
//     seals with ChaCha20-Poly1305 under it and the nonce 0000 || counter,
//     which is XChaCha20-Poly1305 byte for byte (TestChaChaIsXChaCha)
//     without an HChaCha20 per record; readers cache it per salt.
//   - AES-256-GCM derives a session subkey, HMAC-SHA256(data key,
//     "jetwal aes-gcm subkey v1" || salt), and uses the 12-byte nonce
//     0000 || counter under it. Readers derive the subkey from the salt in
//     the stored nonce (cached per salt: a segment holds the records of
//     few sessions).
//
// Within a session the counter never repeats (it only increases, and a
// session refuses to seal once it would wrap). A session never outlives the
// process, so after a crash, a truncation, or a reopen every new record is
// sealed in a new session with a fresh salt. Two sessions collide only if
// they draw the same 128-bit salt: for 2^32 sessions under one data key
// (a segment roll, a restart, an erase each start at most one) the chance
// is below 2^-64. So an (effective key, nonce) pair repeats only with that
// probability, however the disk was cut and rewritten, which is the
// standard bound for random nonces, with none of the 2^32-message limit of
// random 96-bit GCM nonces (the counter is per session, the subkey fresh
// per session). Drawing the salt once per session, not a random nonce per
// record, also keeps crypto/rand off the append path.
//
// Associated data, not the nonce, carries position: a record sealed for
// sequence 5 of segment 1 does not open as sequence 6 or in segment 2.
package crypt
