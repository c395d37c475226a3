// Package auth decides who a client is from the credentials it sent in
// CONNECT: a token, a user name and password (plain or bcrypt-hashed), an
// NKEY signature over the server's nonce, or the verified TLS client
// certificate (verify_and_map). It returns an Identity carrying the user's
// permissions; the server enforces them (package server, perms.go).
//
// The package knows nothing of connections: the server calls it through a
// small interface (server.Authenticator) and owns the wire behaviour
// ("-ERR 'Authorization Violation'" and close). Errors say why a login
// failed for the log and never contain a secret.
//
// Throttle slows repeated failures from one address, so a password cannot
// be guessed at wire speed.
package auth
