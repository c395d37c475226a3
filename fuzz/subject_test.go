package fuzz

import (
	"strings"
	"testing"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/subject"
)

// refMatch is the obvious token-by-token matcher.
func refMatch(filter, subj string) bool {
	f := strings.Split(filter, ".")
	s := strings.Split(subj, ".")
	for i, tok := range f {
		if tok == ">" {
			return i == len(f)-1 && len(s) > i
		}
		if i >= len(s) {
			return false
		}
		if tok != "*" && tok != s[i] {
			return false
		}
	}
	return len(f) == len(s)
}

// FuzzSubjectMatch checks subject.Match and the subject index's filter
// resolution against the reference matcher.
func FuzzSubjectMatch(f *testing.F) {
	for _, c := range [][2]string{
		{"a.b", "a.b"}, {"a.*", "a.b"}, {"a.>", "a.b.c"}, {">", "x"}, {"*.*", "a"},
		{"a.*.c", "a.b.c"}, {"a.>", "a"}, {"a*", "a*"}, {"*", "a.b"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, filter, subj string) {
		if !subject.ValidFilter(filter) || !subject.ValidLiteral(subj) {
			return
		}
		want := refMatch(filter, subj)
		if got := subject.Match(filter, subj); got != want {
			t.Fatalf("Match(%q, %q) = %v, want %v", filter, subj, got, want)
		}
		if subject.IsLiteral(filter) && subject.Overlap(filter, subj) != (filter == subj) {
			t.Fatalf("Overlap(%q, %q) wrong", filter, subj)
		}
		if want && !subject.Overlap(filter, subj) {
			t.Fatalf("Overlap(%q, %q) = false for a match", filter, subj)
		}
		// The index resolves the filter to the same answer.
		x := index.New()
		x.Add(1, index.Loc{}, subj)
		x.Add(2, index.Loc{}, "zz.other")
		n := 0
		x.Subj.Each(filter, func(name string, _ index.SubjectInfo) {
			if name == subj {
				n++
			}
		})
		if (n == 1) != want {
			t.Fatalf("index filter %q on %q: found %d, want match %v", filter, subj, n, want)
		}
	})
}
