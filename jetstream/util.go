package jetstream

import "github.com/jetwal/jetwal/subject"

// matchFilter reports whether subj matches a store-style filter, where "" and
// ">" match everything.
func matchFilter(filter, subj string) bool {
	if filter == "" || filter == ">" {
		return true
	}
	return subject.Match(filter, subj)
}
