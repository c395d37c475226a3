// Package sublist is the subscription index of the jetwal server: a trie of
// subject tokens that answers "which subscriptions match this literal
// subject?" quickly, with a bounded cache of recent answers.
//
// Shape of the trie. Each level maps a literal token to a node and has two
// optional wildcard children, one for '*' (exactly one token) and one for
// '>' (one or more trailing tokens). A node holds the plain subscriptions and
// the queue-group subscriptions whose filter ends there, plus the next level:
//
//	filters: foo.bar  foo.*  foo.>  >
//
//	root ── "foo" ── level ── "bar" ── {foo.bar}
//	  │                 ├──── '*'  ── {foo.*}
//	  │                 └──── '>'  ── {foo.>}
//	  └──── '>'  ── {>}
//
// Matching walks the literal child and the wildcard children of each level,
// so a lookup costs O(tokens × wildcard branching), independent of the number
// of subscriptions.
//
// Results. Match returns a *Result that is shared and must be treated as
// read-only. Results are cached per subject; an insert or removal drops the
// cached results it affects (for a literal filter only its own entry, for a
// wildcard filter every entry it matches) and bumps a generation number that
// callers may use to validate their own private caches (see Gen).
//
// Queue groups. Members of one queue group are merged across all matching
// filters, as NATS does: a group "q" on "foo.*" and a group "q" on "foo.bar"
// form one group for the subject foo.bar, and a publisher delivers to one
// member of it.
//
// Locking. A List is safe for concurrent use. Match takes a read lock on a
// cache hit; a miss computes the result under the read lock and stores it
// under the write lock. Insert and Remove take the write lock.
package sublist
