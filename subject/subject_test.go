package subject

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestValidity(t *testing.T) {
	for _, c := range []struct {
		s               string
		literal, filter bool
	}{
		{"a", true, true},
		{"a.b.c", true, true},
		{"a*b.c>", true, true}, // wildcard bytes inside a token are literal
		{"*", false, true},
		{"a.*.c", false, true},
		{">", false, true},
		{"a.>", false, true},
		{"a.>.b", false, false},
		{"", false, false},
		{".", false, false},
		{"a.", false, false},
		{".a", false, false},
		{"a..b", false, false},
		{"a b", false, false},
		{"a\tb", false, false},
		{"a\r\nb", false, false},
		{"a\x00b", false, false},
	} {
		if got := ValidLiteral(c.s); got != c.literal {
			t.Errorf("ValidLiteral(%q) = %v, want %v", c.s, got, c.literal)
		}
		if got := ValidFilter(c.s); got != c.filter {
			t.Errorf("ValidFilter(%q) = %v, want %v", c.s, got, c.filter)
		}
		// Any valid subject may be published, wildcard tokens included
		// (even after '>', where a filter may not have them).
		if got, want := ValidPublish(c.s), valid(c.s, false); got != want {
			t.Errorf("ValidPublish(%q) = %v, want %v", c.s, got, want)
		}
	}
}

// FuzzValidLiteral: the one-pass ValidLiteral agrees with the two-pass
// definition (a valid filter holding no wildcard token).
func FuzzValidLiteral(f *testing.F) {
	for _, s := range []string{"a.b", "a.*", ">", "a..b", "a*", "*a.>b", ".", "a. b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidLiteral(s), valid(s, true) && IsLiteral(s); got != want {
			t.Fatalf("ValidLiteral(%q) = %v, want %v", s, got, want)
		}
	})
}

func BenchmarkValidLiteral(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if !ValidLiteral("orders.eu.west.created") {
			b.Fatal("invalid")
		}
	}
}

// TestValidPublishSkipsOnlyPlainBytes: ValidPublish skips the byte class
// lookup above maxSpecial, which is only right while every byte there is
// plain.
func TestValidPublishSkipsOnlyPlainBytes(t *testing.T) {
	for c := maxSpecial + 1; c < 256; c++ {
		if byteClass[c] != plain {
			t.Fatalf("byte %q above maxSpecial is not plain", rune(c))
		}
	}
	for _, s := range []string{"a b", "a\tb", "a\rb", "a\nb", "a\x00b", ".a", "a.", "a..b", ""} {
		if ValidPublish(s) {
			t.Errorf("%q accepted", s)
		}
	}
	for _, s := range []string{"a", "a.b", "orders.*", "a.>", "z~{|}.ü", "0-9_A"} {
		if !ValidPublish(s) {
			t.Errorf("%q refused", s)
		}
	}
}

// TestLiteralPrefix: the literal prefix is the tokens before the first
// wildcard, with their dot; and every subject a filter matches starts with
// its filter's literal prefix (over random filters and subjects of a small
// alphabet, so that matches are common).
func TestLiteralPrefix(t *testing.T) {
	for _, c := range []struct{ filter, want string }{
		{"a.b.c", "a.b.c"}, {"a.b.>", "a.b."}, {"a.*.c", "a."}, {"*.b", ""}, {">", ""},
		{"ab.c*.>", "ab.c*."}, {"a.>b.*", "a.>b."},
	} {
		if got := LiteralPrefix(c.filter); got != c.want {
			t.Errorf("LiteralPrefix(%q) = %q, want %q", c.filter, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	tok := func(wild bool) string {
		if wild {
			switch rng.IntN(4) {
			case 0:
				return "*"
			case 1:
				return ">"
			}
		}
		return []string{"a", "b", "ab"}[rng.IntN(3)]
	}
	gen := func(wild bool) string {
		n := 1 + rng.IntN(4)
		var toks []string
		for i := 0; i < n; i++ {
			t := tok(wild)
			toks = append(toks, t)
			if t == ">" {
				break
			}
		}
		return strings.Join(toks, ".")
	}
	matched := 0
	for i := 0; i < 200000; i++ {
		f, s := gen(true), gen(false)
		if Match(f, s) {
			matched++
			if !strings.HasPrefix(s, LiteralPrefix(f)) {
				t.Fatalf("%q matches %q but lacks its literal prefix %q", f, s, LiteralPrefix(f))
			}
		}
	}
	if matched < 1000 {
		t.Fatalf("only %d matches: the property was hardly tested", matched)
	}
}
