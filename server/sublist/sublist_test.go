package sublist

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/subject"
)

type sub struct {
	id     int
	filter string
	queue  string
}

func plainIDs(r *Result[*sub]) []int {
	var ids []int
	for _, s := range r.Plain {
		ids = append(ids, s.id)
	}
	sort.Ints(ids)
	return ids
}

func TestMatchBasics(t *testing.T) {
	l := New[*sub](Options{})
	subs := []*sub{
		{1, "foo.bar", ""},
		{2, "foo.*", ""},
		{3, "foo.>", ""},
		{4, ">", ""},
		{5, "*.bar", ""},
		{6, "foo.bar.baz", ""},
		{7, "*", ""},
	}
	for _, s := range subs {
		if err := l.Insert(s.filter, s.queue, s); err != nil {
			t.Fatalf("insert %q: %v", s.filter, err)
		}
	}
	cases := []struct {
		subj string
		want []int
	}{
		{"foo.bar", []int{1, 2, 3, 4, 5}},
		{"foo", []int{4, 7}},
		{"foo.bar.baz", []int{3, 4, 6}},
		{"x.bar", []int{4, 5}},
		{"x.y.z", []int{4}},
		{"foo..bar", nil},
		{"", nil},
		{".foo", nil},
	}
	for _, c := range cases {
		got := plainIDs(l.Match(c.subj))
		if !slices.Equal(got, c.want) {
			t.Errorf("Match(%q) = %v, want %v", c.subj, got, c.want)
		}
		// A second call answers from the cache and must agree.
		got = plainIDs(l.Match(c.subj))
		if !slices.Equal(got, c.want) {
			t.Errorf("cached Match(%q) = %v, want %v", c.subj, got, c.want)
		}
	}
	if l.Count() != len(subs) {
		t.Fatalf("Count = %d, want %d", l.Count(), len(subs))
	}
}

func TestInvalidFilters(t *testing.T) {
	l := New[*sub](Options{})
	for _, f := range []string{"", "foo..bar", "foo.>.bar", ".foo", "foo.", "a b"} {
		if err := l.Insert(f, "", &sub{}); err != ErrInvalidSubject {
			t.Errorf("Insert(%q) = %v, want ErrInvalidSubject", f, err)
		}
	}
}

func TestQueueGroupsMergeAcrossFilters(t *testing.T) {
	l := New[*sub](Options{})
	a := &sub{1, "foo.*", "q"}
	b := &sub{2, "foo.bar", "q"}
	c := &sub{3, "foo.bar", "other"}
	p := &sub{4, "foo.bar", ""}
	for _, s := range []*sub{a, b, c, p} {
		if err := l.Insert(s.filter, s.queue, s); err != nil {
			t.Fatal(err)
		}
	}
	r := l.Match("foo.bar")
	if len(r.Plain) != 1 || r.Plain[0] != p {
		t.Fatalf("plain = %v", r.Plain)
	}
	if len(r.Queues) != 2 || len(r.QueueNames) != 2 {
		t.Fatalf("queues = %v names = %v", r.Queues, r.QueueNames)
	}
	for i, name := range r.QueueNames {
		switch name {
		case "q":
			if len(r.Queues[i]) != 2 {
				t.Errorf("group q has %d members, want 2", len(r.Queues[i]))
			}
		case "other":
			if len(r.Queues[i]) != 1 {
				t.Errorf("group other has %d members, want 1", len(r.Queues[i]))
			}
		default:
			t.Errorf("unexpected group %q", name)
		}
	}
}

func TestRemoveAndCacheInvalidation(t *testing.T) {
	l := New[*sub](Options{})
	a := &sub{1, "foo.*", ""}
	if !l.Match("foo.bar").Empty() {
		t.Fatal("expected no match before insert")
	}
	if err := l.Insert(a.filter, "", a); err != nil {
		t.Fatal(err)
	}
	// The earlier miss was cached; a wildcard insert must drop it.
	if got := plainIDs(l.Match("foo.bar")); !slices.Equal(got, []int{1}) {
		t.Fatalf("after insert: %v", got)
	}
	b := &sub{2, "foo.bar", ""}
	if err := l.Insert(b.filter, "", b); err != nil {
		t.Fatal(err)
	}
	if got := plainIDs(l.Match("foo.bar")); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("after literal insert: %v", got)
	}
	gen := l.Gen()
	if err := l.Remove(a.filter, "", a); err != nil {
		t.Fatal(err)
	}
	if l.Gen() == gen {
		t.Fatal("generation did not change on Remove")
	}
	if got := plainIDs(l.Match("foo.bar")); !slices.Equal(got, []int{2}) {
		t.Fatalf("after remove: %v", got)
	}
	if err := l.Remove(a.filter, "", a); err != ErrNotFound {
		t.Fatalf("second remove = %v, want ErrNotFound", err)
	}
	if err := l.Remove(b.filter, "q", b); err != ErrNotFound {
		t.Fatalf("remove with wrong queue = %v, want ErrNotFound", err)
	}
	if err := l.Remove(b.filter, "", b); err != nil {
		t.Fatal(err)
	}
	if l.Count() != 0 {
		t.Fatalf("Count = %d", l.Count())
	}
	if !l.mu.root.isEmpty() {
		t.Fatal("trie not pruned after removing everything")
	}
}

// TestMatchAgainstBruteForce compares the trie with subject.Match over random
// filters and subjects.
func TestMatchAgainstBruteForce(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d (replay by editing the test)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	toks := []string{"a", "b", "c", "*", ">"}
	randFilter := func() string {
		n := 1 + rng.IntN(4)
		s := ""
		for i := 0; i < n; i++ {
			tok := toks[rng.IntN(len(toks))]
			if tok == ">" && i != n-1 {
				tok = "*"
			}
			if i > 0 {
				s += "."
			}
			s += tok
		}
		return s
	}
	randSubject := func() string {
		n := 1 + rng.IntN(5)
		s := ""
		for i := 0; i < n; i++ {
			if i > 0 {
				s += "."
			}
			s += toks[rng.IntN(3)]
		}
		return s
	}
	l := New[*sub](Options{CacheSize: 8}) // small cache to exercise eviction
	var live []*sub
	for step := 0; step < 3000; step++ {
		switch op := rng.IntN(10); {
		case op < 4:
			s := &sub{id: step, filter: randFilter()}
			if rng.IntN(3) == 0 {
				s.queue = fmt.Sprintf("q%d", rng.IntN(2))
			}
			if err := l.Insert(s.filter, s.queue, s); err != nil {
				t.Fatalf("insert %q: %v", s.filter, err)
			}
			live = append(live, s)
		case op < 6 && len(live) > 0:
			i := rng.IntN(len(live))
			s := live[i]
			if err := l.Remove(s.filter, s.queue, s); err != nil {
				t.Fatalf("remove %q: %v", s.filter, err)
			}
			live = slices.Delete(live, i, i+1)
		case op == 6:
			// A subject with an empty token matches nothing, whichever
			// way it is looked up (even under a ">" filter).
			subj := []string{"", ".", "a.", ".a", "a..b", "a.b.", "..", "a.b..c"}[rng.IntN(8)]
			if !l.Match(subj).Empty() || !l.MatchOnce(subj).Empty() || !l.MatchUncached(subj).Empty() {
				t.Fatalf("step %d: invalid subject %q matched", step, subj)
			}
		default:
			subj := randSubject()
			r := l.Match(subj)
			if u, o := plainIDs(l.MatchUncached(subj)), plainIDs(l.MatchOnce(subj)); !slices.Equal(u, plainIDs(r)) || !slices.Equal(o, plainIDs(r)) {
				t.Fatalf("step %d %q: Match %v, MatchUncached %v, MatchOnce %v", step, subj, plainIDs(r), u, o)
			}
			var want, wantQ []int
			for _, s := range live {
				if subject.Match(s.filter, subj) {
					if s.queue == "" {
						want = append(want, s.id)
					} else {
						wantQ = append(wantQ, s.id)
					}
				}
			}
			sort.Ints(want)
			sort.Ints(wantQ)
			var gotQ []int
			for gi, g := range r.Queues {
				for _, s := range g {
					if s.queue != r.QueueNames[gi] {
						t.Fatalf("member %d of group %q has queue %q", s.id, r.QueueNames[gi], s.queue)
					}
					gotQ = append(gotQ, s.id)
				}
			}
			sort.Ints(gotQ)
			if got := plainIDs(r); !slices.Equal(got, want) || !slices.Equal(gotQ, wantQ) {
				t.Fatalf("step %d Match(%q) plain %v queue %v, want %v %v", step, subj, got, gotQ, want, wantQ)
			}
		}
	}
	if l.CacheLen() > 8 {
		t.Fatalf("cache grew to %d entries, bound is 8", l.CacheLen())
	}
}

func TestConcurrentUse(t *testing.T) {
	l := New[*sub](Options{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				s := &sub{id: i, filter: fmt.Sprintf("w%d.%d.*", w, i%7)}
				if err := l.Insert(s.filter, "", s); err != nil {
					t.Error(err)
					return
				}
				if l.Match(fmt.Sprintf("w%d.%d.x", w, i%7)).Empty() {
					t.Errorf("worker %d: own subscription not matched", w)
					return
				}
				if err := l.Remove(s.filter, "", s); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if l.Count() != 0 {
		t.Fatalf("Count = %d", l.Count())
	}
}

func BenchmarkMatchCached(b *testing.B) {
	l := New[*sub](Options{})
	for i := 0; i < 100; i++ {
		_ = l.Insert(fmt.Sprintf("foo.%d.*", i), "", &sub{id: i})
	}
	_ = l.Insert("foo.>", "", &sub{})
	b.ReportAllocs()
	for b.Loop() {
		if l.Match("foo.7.bar").Empty() {
			b.Fatal("no match")
		}
	}
}

func BenchmarkMatchUncached(b *testing.B) {
	l := New[*sub](Options{CacheSize: -1})
	for i := 0; i < 100; i++ {
		_ = l.Insert(fmt.Sprintf("foo.%d.*", i), "", &sub{id: i})
	}
	b.ReportAllocs()
	for b.Loop() {
		if l.Match("foo.7.bar").Empty() {
			b.Fatal("no match")
		}
	}
}

// MatchOnce answers like Match, serves cached results, and never fills the
// cache.
func TestMatchOnceDoesNotFillCache(t *testing.T) {
	l := New[*sub](Options{})
	inbox := &sub{1, "_INBOX.abc.*", ""}
	if err := l.Insert(inbox.filter, "", inbox); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if got := plainIDs(l.MatchOnce(fmt.Sprintf("_INBOX.abc.%d", i))); !slices.Equal(got, []int{1}) {
			t.Fatalf("MatchOnce %d: %v", i, got)
		}
	}
	if !l.MatchOnce("other").Empty() || !l.MatchOnce("bad..subject").Empty() {
		t.Fatal("MatchOnce matched what it should not")
	}
	if n := l.CacheLen(); n != 0 {
		t.Fatalf("MatchOnce filled the cache: %d entries", n)
	}
	l.Match("_INBOX.abc.7") // cached now
	if n := l.CacheLen(); n != 1 {
		t.Fatalf("Match cached %d entries, want 1", n)
	}
	if got := plainIDs(l.MatchOnce("_INBOX.abc.7")); !slices.Equal(got, []int{1}) {
		t.Fatalf("MatchOnce from the cache: %v", got)
	}
}

// TestOneNodeMatchShared: a subject matched by one node's subscriptions
// (an ack reply under "$JS.ACK.s.c.>", say) gets that node's own result:
// no allocation per match once built. Changing the node's subscriptions
// gives later matches a new result and leaves results already handed out
// as they were; a second matching node gets a merged copy, never a change
// to the shared one.
func TestOneNodeMatchShared(t *testing.T) {
	l := New[*sub](Options{})
	a := &sub{1, "$JS.ACK.s.c.>", ""}
	if err := l.Insert(a.filter, "", a); err != nil {
		t.Fatal(err)
	}
	l.MatchOnce("$JS.ACK.s.c.1.1.1.0.0.0.0")
	// The subjects are made before measuring: fmt's printer comes from a
	// sync.Pool, which under -race drops entries at random, so a Sprintf
	// inside the measured function allocated a varying amount.
	subjects := make([]string, 202)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("$JS.ACK.s.c.1.%d.%d.0.0.0.0", i, i)
	}
	i := 0
	if n := testing.AllocsPerRun(200, func() {
		l.MatchOnce(subjects[i])
		i++
	}); n > 0 {
		t.Fatalf("%.1f allocations per one-node match", n)
	}
	old := l.MatchOnce("$JS.ACK.s.c.1.2.3.0.0.0.0")
	b := &sub{2, "$JS.ACK.s.c.>", ""}
	if err := l.Insert(b.filter, "", b); err != nil {
		t.Fatal(err)
	}
	if got := plainIDs(old); !slices.Equal(got, []int{1}) {
		t.Fatalf("a result handed out changed to %v", got)
	}
	if got := plainIDs(l.MatchOnce("$JS.ACK.s.c.1.2.4.0.0.0.0")); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("after insert: %v", got)
	}
	w := &sub{3, "$JS.ACK.*.c.>", ""}
	if err := l.Insert(w.filter, "q", w); err != nil {
		t.Fatal(err)
	}
	r := l.MatchOnce("$JS.ACK.s.c.1.2.5.0.0.0.0")
	if got := plainIDs(r); !slices.Equal(got, []int{1, 2}) || len(r.Queues) != 1 || len(r.Queues[0]) != 1 {
		t.Fatalf("two nodes: plain %v queues %v", got, r.Queues)
	}
	if err := l.Remove(a.filter, "", a); err != nil {
		t.Fatal(err)
	}
	if got := plainIDs(l.MatchOnce("$JS.ACK.s.c.1.2.6.0.0.0.0")); !slices.Equal(got, []int{2}) {
		t.Fatalf("after remove: %v", got)
	}
	if got := plainIDs(r); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("a merged result handed out changed to %v", got)
	}
}

// TestValidPublish compares the one-pass check with its definition: no
// token between dots is empty.
func TestValidPublish(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	alphabet := []byte{'.', 'a', '*', '>', '$'}
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.IntN(8))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		subj := string(b)
		want := !slices.Contains(strings.Split(subj, "."), "")
		if got := validPublish(subj); got != want {
			t.Fatalf("validPublish(%q) = %v, want %v", subj, got, want)
		}
	}
}

// BenchmarkMatchAck looks up JetStream ack subjects, unique per delivery,
// under the consumer's "$JS.ACK.<stream>.<consumer>.>" subscription, as a
// fetch's acknowledgements are routed. MatchUncached skips the cache
// lookup (hashing the subject), which can only miss.
func BenchmarkMatchAck(b *testing.B) {
	l := New[*sub](Options{})
	s := &sub{1, "$JS.ACK.benchstream.durable.>", ""}
	if err := l.Insert(s.filter, "", s); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 256; i++ { // a cache holding the subjects that repeat
		l.Match(fmt.Sprintf("orders.%d", i))
	}
	subjs := make([]string, 1024)
	for i := range subjs {
		subjs[i] = fmt.Sprintf("$JS.ACK.benchstream.durable.1.%d.%d.1764950000000000000.%d", 1000+i, 1000+i, 1024-i)
	}
	for _, way := range []string{"MatchOnce", "MatchUncached"} {
		b.Run(way, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				subj := subjs[i%len(subjs)]
				var r *Result[*sub]
				if way == "MatchOnce" {
					r = l.MatchOnce(subj)
				} else {
					r = l.MatchUncached(subj)
				}
				if len(r.Plain) != 1 {
					b.Fatalf("%q matched %d", subj, len(r.Plain))
				}
			}
		})
	}
}
