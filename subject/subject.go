package subject

import "strings"

// Wildcard tokens.
const (
	pwc = '*' // one token
	fwc = '>' // one or more trailing tokens
)

// validToken reports whether tok is a legal token. Wildcard characters inside
// a longer token ("a*b") are literal in NATS and therefore allowed.
func validToken(tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case ' ', '\t', '\r', '\n', '.', 0:
			return false
		}
	}
	return true
}

func valid(s string, wildcards bool) bool {
	if s == "" {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			tok := s[start:i]
			if !validToken(tok) {
				return false
			}
			if wildcards && tok == ">" && i != len(s) {
				return false // '>' must be the last token
			}
			start = i + 1
		}
	}
	return true
}

// ValidFilter reports whether s is a valid subject that may hold wildcards.
func ValidFilter(s string) bool { return valid(s, true) }

// ValidLiteral reports whether s is a valid subject without wildcards, the
// only kind a message may be published to. It is on every publish's path, so
// it checks in one pass, with a byte table, what valid and IsLiteral check in
// two.
func ValidLiteral(s string) bool {
	start := 0 // first byte of the current token
	for i := 0; i < len(s); i++ {
		c := s[i]
		if byteClass[c] == plain {
			continue
		}
		switch byteClass[c] {
		case dot:
			if i == start {
				return false // empty token
			}
			start = i + 1
		case bad:
			return false
		case wild:
			if i == start && (i+1 == len(s) || s[i+1] == '.') {
				return false // a wildcard token
			}
		}
	}
	return start < len(s)
}

// ValidPublish reports whether s is a subject a message may be stored
// under: a valid subject in which a wildcard token, if any, is an ordinary
// character. nats-server accepts such a publish outside pedantic mode, and
// a stream that captures it stores it as it came ("orders.*"); a filter
// "orders.*" then matches it, a literal "orders.new" does not.
func ValidPublish(s string) bool {
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] > maxSpecial {
			continue // letters, '_' and most others: the common case
		}
		switch byteClass[s[i]] {
		case dot:
			if i == start {
				return false
			}
			start = i + 1
		case bad:
			return false
		}
	}
	return start < len(s)
}

// maxSpecial is the highest byte byteClass does not class plain ('>').
const maxSpecial = fwc

const (
	plain = iota
	dot
	bad
	wild
)

var byteClass = func() (t [256]uint8) {
	t['.'] = dot
	for _, c := range []byte{' ', '\t', '\r', '\n', 0} {
		t[c] = bad
	}
	t[pwc], t[fwc] = wild, wild
	return t
}()

// IsLiteral reports whether s holds no wildcard token.
func IsLiteral(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if i-start == 1 && (s[start] == pwc || s[start] == fwc) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// LiteralPrefix is the part of filter before its first wildcard token,
// with the dot that ends it: every subject filter matches starts with it.
// It is "" when the first token is a wildcard, and filter itself when it
// has none.
func LiteralPrefix(filter string) string {
	start := 0
	for i := 0; i <= len(filter); i++ {
		if i == len(filter) || filter[i] == '.' {
			if i-start == 1 && (filter[start] == pwc || filter[start] == fwc) {
				return filter[:start]
			}
			start = i + 1
		}
	}
	return filter
}

// Match reports whether the literal subject subj matches filter.
// It allocates nothing.
func Match(filter, subj string) bool {
	for {
		fi := strings.IndexByte(filter, '.')
		si := strings.IndexByte(subj, '.')
		var ft, st string
		if fi < 0 {
			ft = filter
		} else {
			ft = filter[:fi]
		}
		if si < 0 {
			st = subj
		} else {
			st = subj[:si]
		}
		if ft == ">" {
			return st != ""
		}
		if ft != "*" && ft != st {
			return false
		}
		if fi < 0 || si < 0 {
			return fi < 0 && si < 0
		}
		filter = filter[fi+1:]
		subj = subj[si+1:]
	}
}

// Overlap reports whether some literal subject could match both filters.
func Overlap(a, b string) bool {
	at := strings.Split(a, ".")
	bt := strings.Split(b, ".")
	for i := 0; ; i++ {
		if i == len(at) || i == len(bt) {
			return len(at) == len(bt)
		}
		x, y := at[i], bt[i]
		if x == ">" || y == ">" {
			return true
		}
		if x != "*" && y != "*" && x != y {
			return false
		}
	}
}

// SubsetOf reports whether every subject matching a also matches b.
func SubsetOf(a, b string) bool {
	at := strings.Split(a, ".")
	bt := strings.Split(b, ".")
	for i := 0; ; i++ {
		if i == len(bt) {
			return i == len(at)
		}
		if bt[i] == ">" {
			return i < len(at)
		}
		if i == len(at) {
			return false
		}
		switch {
		case bt[i] == "*":
			if at[i] == ">" {
				return false
			}
		case at[i] != bt[i]:
			return false
		}
	}
}

// Tokens returns the number of tokens in s.
func Tokens(s string) int { return strings.Count(s, ".") + 1 }
