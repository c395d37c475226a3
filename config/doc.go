// Package config reads a server configuration file in nats-server's format
// and maps it to jetwal's settings.
//
// The file is parsed by nats-server's own parser
// (github.com/nats-io/nats-server/v2/conf), so includes, variables
// ($NAME, defined in the file or taken from the environment), blocks,
// arrays, size suffixes (1MB) and comments behave exactly as in
// nats-server. This package walks the parsed map:
//
//   - settings jetwal implements are checked and mapped to Config;
//   - settings nats-server knows but jetwal does not implement (cluster,
//     leafnodes, websocket, ...) and unknown names produce a Warning naming
//     the field and its position, so an existing file still loads;
//   - settings whose absence would weaken security (account exports and
//     imports, operator JWTs, auth callout) are errors: jetwal refuses to start rather than
//     run without the authentication they describe.
//
// Every error and warning is "file:line:column: reason".
//
// Command-line flags override the file (cmd/jetwal merges them using
// Config.Set, which records the settings the file gave).
package config
