package sublist

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jetwal/jetwal/subject"
)

// Errors returned by Insert and Remove.
var (
	// ErrInvalidSubject means the filter is not a valid NATS subject filter.
	ErrInvalidSubject = errors.New("sublist: invalid subject")
	// ErrNotFound means Remove found no such subscription.
	ErrNotFound = errors.New("sublist: subscription not found")
)

// DefaultCacheSize is the number of subjects whose results are cached when
// Options.CacheSize is zero.
const DefaultCacheSize = 4096

// Options tune a List. The zero value gives the defaults.
type Options struct {
	// CacheSize bounds the result cache; 0 means DefaultCacheSize and a
	// negative value disables the cache.
	CacheSize int
}

// Result lists the subscriptions matching one subject. It is shared between
// callers and must not be modified.
type Result[T comparable] struct {
	// Plain holds every matching subscription that is not in a queue group.
	Plain []T
	// Queues holds one slice of members per queue group; QueueNames[i] is the
	// name of group Queues[i].
	Queues     [][]T
	QueueNames []string
}

// Empty reports whether the result holds no subscription at all.
func (r *Result[T]) Empty() bool { return len(r.Plain) == 0 && len(r.Queues) == 0 }

// List is a subscription index. The zero value is not usable; call New.
type List[T comparable] struct {
	gen atomic.Uint64 // bumped after every change; read without the lock

	mu struct {
		sync.RWMutex
		// Guarded by the RWMutex above.
		root  *level[T]
		count int
		cache map[string]*Result[T]
	}
	cacheSize int
	empty     *Result[T]
}

type level[T comparable] struct {
	literal  map[string]*node[T]
	pwc, fwc *node[T]
}

type node[T comparable] struct {
	next   *level[T]
	plain  []T
	queues map[string][]T
	// own is this node's subscriptions as a Result, built by the first
	// match that needs it and dropped when they change (under the write
	// lock, so never while a match reads it). A match that finds one node
	// returns it as is: no allocation for a subject matched once, such as
	// a JetStream ack reply.
	own atomic.Pointer[Result[T]]
}

// result returns the node's own Result (read-only, shared).
func (n *node[T]) result() *Result[T] {
	if r := n.own.Load(); r != nil {
		return r
	}
	var b builder[T]
	b.merge(n)
	n.own.Store(b.r) // concurrent matches may each build one: identical
	return b.r
}

func (n *node[T]) isEmpty() bool {
	return len(n.plain) == 0 && len(n.queues) == 0 && (n.next == nil || n.next.isEmpty())
}

func (l *level[T]) isEmpty() bool {
	return len(l.literal) == 0 && l.pwc == nil && l.fwc == nil
}

// New returns an empty List.
func New[T comparable](opts Options) *List[T] {
	l := &List[T]{cacheSize: opts.CacheSize, empty: &Result[T]{}}
	if l.cacheSize == 0 {
		l.cacheSize = DefaultCacheSize
	}
	l.mu.root = &level[T]{}
	if l.cacheSize > 0 {
		l.mu.cache = make(map[string]*Result[T])
	}
	return l
}

// Gen returns a number that changes whenever the set of subscriptions
// changes. A caller keeping its own cache of Match results may keep using an
// entry as long as Gen returns the value it had when the entry was made.
func (l *List[T]) Gen() uint64 { return l.gen.Load() }

// Count returns the number of subscriptions in the list.
func (l *List[T]) Count() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.count
}

// Insert adds v under filter, in queue group queue ("" for none).
// Inserting the same v twice stores it twice.
func (l *List[T]) Insert(filter, queue string, v T) error {
	if !subject.ValidFilter(filter) {
		return ErrInvalidSubject
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lv := l.mu.root
	var n *node[T]
	rest := filter
	for {
		tok, tail, last := nextToken(rest)
		n = lv.child(tok, true)
		if last {
			break
		}
		if n.next == nil {
			n.next = &level[T]{}
		}
		lv, rest = n.next, tail
	}
	if queue == "" {
		n.plain = append(n.plain, v)
	} else {
		if n.queues == nil {
			n.queues = make(map[string][]T)
		}
		n.queues[queue] = append(n.queues[queue], v)
	}
	n.own.Store(nil)
	l.mu.count++
	l.invalidate(filter)
	return nil
}

// Remove deletes one occurrence of v stored under filter and queue.
func (l *List[T]) Remove(filter, queue string, v T) error {
	if !subject.ValidFilter(filter) {
		return ErrInvalidSubject
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Walk down, remembering the path for pruning.
	type step struct {
		lv  *level[T]
		tok string
		n   *node[T]
	}
	var pathBuf [16]step
	path := pathBuf[:0]
	lv := l.mu.root
	rest := filter
	var n *node[T]
	for {
		tok, tail, last := nextToken(rest)
		n = lv.child(tok, false)
		if n == nil {
			return ErrNotFound
		}
		path = append(path, step{lv, tok, n})
		if last {
			break
		}
		if n.next == nil {
			return ErrNotFound
		}
		lv, rest = n.next, tail
	}
	if queue == "" {
		i := indexOf(n.plain, v)
		if i < 0 {
			return ErrNotFound
		}
		n.plain = deleteAt(n.plain, i)
	} else {
		members := n.queues[queue]
		i := indexOf(members, v)
		if i < 0 {
			return ErrNotFound
		}
		members = deleteAt(members, i)
		if len(members) == 0 {
			delete(n.queues, queue)
		} else {
			n.queues[queue] = members
		}
	}
	n.own.Store(nil)
	l.mu.count--
	// Prune empty nodes bottom-up.
	for i := len(path) - 1; i >= 0; i-- {
		s := path[i]
		if !s.n.isEmpty() {
			break
		}
		s.lv.drop(s.tok)
		if i > 0 && s.lv.isEmpty() {
			path[i-1].n.next = nil
		}
	}
	l.invalidate(filter)
	return nil
}

// invalidate drops cached results that filter can affect and bumps the
// generation. Write lock held.
func (l *List[T]) invalidate(filter string) {
	l.gen.Add(1)
	if l.mu.cache == nil {
		return
	}
	if subject.IsLiteral(filter) {
		delete(l.mu.cache, filter)
		return
	}
	for k := range l.mu.cache {
		if subject.Match(filter, k) {
			delete(l.mu.cache, k)
		}
	}
}

// Match returns the subscriptions whose filters match the literal subject
// subj. A subject that is not a valid literal matches nothing. The result is
// shared: do not modify it.
func (l *List[T]) Match(subj string) *Result[T] {
	r, gen, hit := l.match(subj)
	if hit || l.mu.cache == nil {
		return r
	}
	l.mu.Lock()
	if l.gen.Load() == gen { // nothing changed since we computed r
		if len(l.mu.cache) >= l.cacheSize {
			l.evict()
		}
		l.mu.cache[strings.Clone(subj)] = r
	}
	l.mu.Unlock()
	return r
}

// MatchOnce is Match for a subject that is unlikely to be published to
// again, such as a request's unique reply inbox: it uses a cached result but
// does not add one. Filling the cache with one-off subjects would only evict
// the subjects that repeat, and take the write lock on every call.
func (l *List[T]) MatchOnce(subj string) *Result[T] {
	r, _, _ := l.match(subj)
	return r
}

// MatchUncached is MatchOnce for a subject never published before, such as
// a JetStream ack subject (unique per delivery): the cache cannot hold it,
// so it goes straight to the tree without hashing subj for a lookup.
func (l *List[T]) MatchUncached(subj string) *Result[T] {
	if !validPublish(subj) {
		return l.empty
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.treeRLocked(subj)
}

// match looks subj up in the cache, else in the tree; gen is the
// generation the tree result was computed at.
func (l *List[T]) match(subj string) (r *Result[T], gen uint64, hit bool) {
	if !validPublish(subj) {
		return l.empty, 0, true
	}
	l.mu.RLock()
	if r, ok := l.mu.cache[subj]; ok {
		l.mu.RUnlock()
		return r, 0, true
	}
	gen = l.gen.Load()
	r = l.treeRLocked(subj)
	l.mu.RUnlock()
	return r, gen, false
}

// treeRLocked matches subj against the tree (read lock held).
func (l *List[T]) treeRLocked(subj string) *Result[T] {
	var b builder[T]
	matchLevel(l.mu.root, subj, &b)
	if r := b.result(); r != nil {
		return r
	}
	return l.empty
}

// HasInterest reports whether any subscription matches subj.
func (l *List[T]) HasInterest(subj string) bool { return !l.Match(subj).Empty() }

// evict drops about a quarter of the cache. Go's map iteration order is
// random, which makes this a random eviction. Write lock held.
func (l *List[T]) evict() {
	drop := len(l.mu.cache)/4 + 1
	for k := range l.mu.cache {
		delete(l.mu.cache, k)
		drop--
		if drop == 0 {
			return
		}
	}
}

// CacheLen returns the number of cached results (for tests and metrics).
func (l *List[T]) CacheLen() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.mu.cache)
}

func matchLevel[T comparable](lv *level[T], subj string, b *builder[T]) {
	for lv != nil {
		tok, rest, last := nextToken(subj)
		if lv.fwc != nil {
			b.add(lv.fwc)
		}
		if lv.pwc != nil {
			if last {
				b.add(lv.pwc)
			} else {
				matchLevel(lv.pwc.next, rest, b)
			}
		}
		n := lv.literal[tok]
		if n == nil {
			return
		}
		if last {
			b.add(n)
			return
		}
		lv, subj = n.next, rest
	}
}

// child returns the node for tok, creating it when create is set.
func (lv *level[T]) child(tok string, create bool) *node[T] {
	switch tok {
	case "*":
		if lv.pwc == nil && create {
			lv.pwc = &node[T]{}
		}
		return lv.pwc
	case ">":
		if lv.fwc == nil && create {
			lv.fwc = &node[T]{}
		}
		return lv.fwc
	}
	n := lv.literal[tok]
	if n == nil && create {
		if lv.literal == nil {
			lv.literal = make(map[string]*node[T])
		}
		n = &node[T]{}
		lv.literal[tok] = n
	}
	return n
}

func (lv *level[T]) drop(tok string) {
	switch tok {
	case "*":
		lv.pwc = nil
	case ">":
		lv.fwc = nil
	default:
		delete(lv.literal, tok)
	}
}

// builder accumulates a Result during a trie walk.
type builder[T comparable] struct {
	r      *Result[T]
	shared bool // r is a node's own result: copy it before adding to it
}

// add adds n's subscriptions to the result: the first node's own result
// stands for it until a second node contributes.
func (b *builder[T]) add(n *node[T]) {
	if len(n.plain) == 0 && len(n.queues) == 0 {
		return
	}
	if b.r == nil {
		b.r, b.shared = n.result(), true
		return
	}
	if b.shared {
		b.r, b.shared = b.r.clone(), false
	}
	b.merge(n)
}

func (r *Result[T]) clone() *Result[T] {
	c := &Result[T]{Plain: append([]T(nil), r.Plain...), QueueNames: append([]string(nil), r.QueueNames...)}
	for _, q := range r.Queues {
		c.Queues = append(c.Queues, append([]T(nil), q...))
	}
	return c
}

// merge appends n's subscriptions to b.r (owned by b), creating it.
func (b *builder[T]) merge(n *node[T]) {
	if b.r == nil {
		b.r = &Result[T]{}
	}
	r := b.r
	r.Plain = append(r.Plain, n.plain...)
	for name, members := range n.queues {
		merged := false
		for i, have := range r.QueueNames {
			if have == name {
				r.Queues[i] = append(r.Queues[i], members...)
				merged = true
				break
			}
		}
		if !merged {
			r.QueueNames = append(r.QueueNames, name)
			r.Queues = append(r.Queues, append([]T(nil), members...))
		}
	}
}

func (b *builder[T]) result() *Result[T] { return b.r }

// nextToken splits s at its first '.'.
func nextToken(s string) (tok, rest string, last bool) {
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return s, "", true
	}
	return s[:i], s[i+1:], false
}

// validPublish is a fast check that subj has no empty token. Wildcard
// characters in a published subject are treated as literal tokens.
func validPublish(subj string) bool {
	if subj == "" || subj[0] == '.' || subj[len(subj)-1] == '.' {
		return false
	}
	return !strings.Contains(subj, "..")
}

func indexOf[T comparable](s []T, v T) int {
	for i := range s {
		if s[i] == v {
			return i
		}
	}
	return -1
}

// deleteAt removes s[i] keeping order, and clears the vacated slot so the
// removed value can be garbage collected.
func deleteAt[T comparable](s []T, i int) []T {
	copy(s[i:], s[i+1:])
	var zero T
	s[len(s)-1] = zero
	return s[:len(s)-1]
}
