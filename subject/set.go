package subject

import "strings"

// Set holds subject filters in a token tree, so that whether a filter
// overlaps any member costs a walk of the tree along the filter's tokens,
// not a comparison with every member: checking 10,000 subjects against each
// other is 10,000 walks instead of 50 million comparisons.
type Set struct {
	root setNode
}

type setNode struct {
	next  map[string]*setNode
	owner string // set on the node a member ends at
	end   bool
}

// Add puts filter into the set, remembering owner for Overlapping to
// report. filter must be valid (ValidFilter).
func (s *Set) Add(filter, owner string) {
	n := &s.root
	for tok := range strings.SplitSeq(filter, ".") {
		c := n.next[tok]
		if c == nil {
			if n.next == nil {
				n.next = make(map[string]*setNode)
			}
			c = &setNode{}
			n.next[tok] = c
		}
		n = c
	}
	if !n.end {
		n.end, n.owner = true, owner
	}
}

// Overlapping returns the owner of a member that overlaps filter (some
// literal subject matches both), and whether there is one. It agrees with
// Overlap applied to every member.
func (s *Set) Overlapping(filter string) (string, bool) {
	return s.root.overlap(strings.Split(filter, "."))
}

func (n *setNode) overlap(toks []string) (string, bool) {
	if len(toks) == 0 {
		return n.owner, n.end
	}
	// A member ending in ">" here matches any one or more tokens.
	if c := n.next[">"]; c != nil {
		return c.owner, true
	}
	switch t := toks[0]; t {
	case ">":
		// The filter matches one or more tokens: any member with at least
		// one more token overlaps it.
		for _, c := range n.next {
			if owner, ok := c.any(); ok {
				return owner, true
			}
		}
		return "", false
	case "*":
		for _, c := range n.next {
			if owner, ok := c.overlap(toks[1:]); ok {
				return owner, true
			}
		}
		return "", false
	default:
		if c := n.next[t]; c != nil {
			if owner, ok := c.overlap(toks[1:]); ok {
				return owner, true
			}
		}
		if c := n.next["*"]; c != nil {
			return c.overlap(toks[1:])
		}
		return "", false
	}
}

// any returns the owner of some member at or below n.
func (n *setNode) any() (string, bool) {
	if n.end {
		return n.owner, true
	}
	for _, c := range n.next {
		if owner, ok := c.any(); ok {
			return owner, true
		}
	}
	return "", false
}
