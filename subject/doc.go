// Package subject validates NATS subjects and matches them against filters.
//
// A subject is a non-empty sequence of tokens separated by '.'; a token is a
// non-empty run of printable characters other than '.', space, tab, CR and LF.
// A filter may also use two wildcards, each only as a whole token: '*' matches
// exactly one token and '>' (last token only) matches one or more tokens.
package subject
