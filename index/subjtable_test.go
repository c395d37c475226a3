package index

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"
)

// TestSubjectSizes: MemBytes counts entries as 32 bytes and lists as 64.
func TestSubjectSizes(t *testing.T) {
	if e, l := unsafe.Sizeof(entry{}), unsafe.Sizeof(seqList{}); e != 32 || l != 64 {
		t.Fatalf("entry is %d bytes, seqList %d; MemBytes assumes 32 and 64", e, l)
	}
}

func alwaysLive(uint64) bool { return true }

// TestSubjectsKVNoLists: subjects that keep one or two messages (a KV
// bucket with history 1: each update adds a revision and drops the older)
// never get a sequence list, and the update cycle does not allocate.
func TestSubjectsKVNoLists(t *testing.T) {
	x := NewSubjects()
	live := map[uint64]bool{}
	isLive := func(q uint64) bool { return live[q] }
	const keys = 3000
	seq := uint64(0)
	names := make([][]byte, keys)
	for i := range names {
		names[i] = fmt.Appendf(nil, "$KV.b.key-%06d", i)
		seq++
		x.AddBytes(names[i], seq)
		live[seq] = true
	}
	update := func(i int) {
		info, _ := x.Get(string(names[i]))
		seq++
		live[seq] = true
		x.AddBytes(names[i], seq)
		delete(live, info.First)
		x.Remove(string(names[i]), info.First, isLive)
	}
	for r := range 3 {
		for i := range keys {
			update((i * 7) % keys)
		}
		if x.lists.n != 0 {
			t.Fatalf("round %d: %d sequence lists for subjects of <= 2 messages", r, x.lists.n)
		}
	}
	for i := range keys {
		info, ok := x.Get(string(names[i]))
		if !ok || info.Msgs != 1 || info.First != info.Last || !live[info.First] {
			t.Fatalf("subject %s: %+v %v", names[i], info, ok)
		}
	}
	// Updates reuse nothing but the entry: no allocation (the map in this
	// test is kept out by updating a key whose sequences are not tracked).
	n := 0
	allocs := testing.AllocsPerRun(200, func() {
		seq++
		x.AddBytes(names[n%keys], seq)
		x.Remove(string(names[n%keys]), seq, alwaysLive)
		n += 13
	})
	if allocs != 0 {
		t.Fatalf("update of a known subject allocates %.1f times", allocs)
	}
}

// TestSubjectsAddBytesNoAlloc: AddBytes of a known subject allocates
// nothing, on the last-subject fast path and through the table.
func TestSubjectsAddBytesNoAlloc(t *testing.T) {
	x := NewSubjects()
	names := make([][]byte, 1000)
	for i := range names {
		names[i] = fmt.Appendf(nil, "ev.%d.x", i)
		x.AddBytes(names[i], uint64(i+1))
	}
	seq := uint64(10_000)
	for range 3 { // lists made and grown to a block
		for i := range names {
			seq++
			x.AddBytes(names[i], seq)
		}
	}
	i := 0
	if a := testing.AllocsPerRun(500, func() {
		seq++
		x.AddBytes(names[i%len(names)], seq)
		i += 7
	}); a > 0.1 { // lists grow now and then (amortised)
		t.Fatalf("AddBytes of known subjects allocates %.2f times per call", a)
	}
	if a := testing.AllocsPerRun(500, func() { seq++; x.AddBytes(names[3], seq) }); a > 0.1 {
		t.Fatalf("AddBytes of the last subject allocates %.2f times per call", a)
	}
	if a := testing.AllocsPerRun(500, func() { _, _ = x.Get("ev.17.x") }); a != 0 {
		t.Fatalf("Get allocates %.1f times", a)
	}
}

// TestSubjectsChunksAndReuse: entries span many chunks; deleted entries are
// reused by new subjects; wildcard walks see exactly the live ones.
func TestSubjectsChunksAndReuse(t *testing.T) {
	x := NewSubjects()
	const n = 5 * chunkLen
	for i := range n {
		x.Add(fmt.Sprintf("a.%d.%s", i, []string{"even", "odd"}[i%2]), uint64(i+1))
	}
	if len(x.ents.c) < 5 {
		t.Fatalf("%d entries in %d chunks, want >= 5", n, len(x.ents.c))
	}
	for i := 1; i < n; i += 2 {
		x.Remove(fmt.Sprintf("a.%d.odd", i), uint64(i+1), alwaysLive)
	}
	count := func(filter string) (k int) {
		x.Each(filter, func(name string, info SubjectInfo) {
			if !strings.HasSuffix(name, ".even") && filter != "b.>" {
				t.Fatalf("Each(%q) gave deleted subject %s", filter, name)
			}
			k++
		})
		return k
	}
	if k := count("a.*.even"); k != n/2 {
		t.Fatalf("a.*.even: %d subjects, want %d", k, n/2)
	}
	if k := count("a.*.odd"); k != 0 {
		t.Fatalf("a.*.odd: %d subjects after deleting them all", k)
	}
	if p := x.PlanFor("a.*.odd"); !p.Empty() {
		t.Fatal("plan of deleted subjects is not empty")
	}
	before := x.ents.n
	for i := range n / 2 {
		x.Add(fmt.Sprintf("b.%d", i), uint64(n+i+1))
	}
	if x.ents.n != before {
		t.Fatalf("%d new subjects after %d deletions grew entries from %d to %d", n/2, n/2, before, x.ents.n)
	}
	if k := count("b.>"); k != n/2 || x.Len() != n {
		t.Fatalf("b.>: %d subjects, Len %d", k, x.Len())
	}
	if info, ok := x.Get("b.100"); !ok || info != (SubjectInfo{Msgs: 1, First: n + 101, Last: n + 101}) {
		t.Fatalf("b.100: %+v %v", info, ok)
	}
}

// TestSubjectsArenaCompaction: when most names are deleted the arena is
// rewritten with only the live ones, which stay readable.
func TestSubjectsArenaCompaction(t *testing.T) {
	x := NewSubjects()
	const n = 20_000
	for i := range n {
		x.Add(fmt.Sprintf("compact.subject.%07d", i), uint64(i+1))
	}
	full := x.names.capBytes()
	for i := range n {
		if i%10 != 0 {
			x.Remove(fmt.Sprintf("compact.subject.%07d", i), uint64(i+1), alwaysLive)
		}
	}
	if got := x.names.capBytes(); got > full/3 {
		t.Fatalf("arena holds %d bytes after deleting 90%% of %d, want compacted", got, full)
	}
	if x.names.garbage > x.names.live {
		t.Fatalf("arena: %d garbage, %d live bytes", x.names.garbage, x.names.live)
	}
	for i := 0; i < n; i += 10 {
		name := fmt.Sprintf("compact.subject.%07d", i)
		if info, ok := x.Get(name); !ok || info.First != uint64(i+1) {
			t.Fatalf("%s after compaction: %+v %v", name, info, ok)
		}
	}
	k := 0
	x.Each("compact.subject.*", func(string, SubjectInfo) { k++ })
	if k != n/10 || x.Len() != n/10 {
		t.Fatalf("%d subjects by wildcard, Len %d, want %d", k, x.Len(), n/10)
	}
}

// TestSubjectsLongName: a name longer than an arena page gets a page of
// its own; short names around it are unaffected.
func TestSubjectsLongName(t *testing.T) {
	x := NewSubjects()
	long := strings.Repeat("x", 3*pageSize/2)
	x.Add("a", 1)
	x.Add(long, 2)
	x.Add("b", 3)
	x.Add(long, 4)
	for name, want := range map[string]SubjectInfo{"a": {1, 1, 1}, long: {2, 2, 4}, "b": {1, 3, 3}} {
		if info, ok := x.Get(name); !ok || info != want {
			t.Fatalf("%.10s: %+v %v, want %+v", name, info, ok, want)
		}
	}
	x.Remove(long, 2, alwaysLive)
	x.Remove(long, 4, alwaysLive)
	if _, ok := x.Get(long); ok || x.Len() != 2 {
		t.Fatalf("long name still present (Len %d)", x.Len())
	}
}

// TestSubjectsCountOverflow: a subject's count passes 2^32 (held in the
// overflow map), survives a checkpoint and counts back down.
func TestSubjectsCountOverflow(t *testing.T) {
	x := New()
	x.Add(1, Loc{}, "big")
	x.Add(2, Loc{}, "big")
	x.Add(3, Loc{}, "big")
	// Pretend: 2^32-1 messages, 1 to 2^32-1, a run in the subject's list
	// (the checkpoint decoder holds the count to the list's entries).
	id, _, _ := x.Subj.lookup("big")
	e := x.Subj.ent(id)
	e.msgs, e.last = math.MaxUint32, math.MaxUint32
	*x.Subj.lists.at(e.list - 1) = seqList{marks: []listMark{{seq: 1, n: math.MaxUint32}}, n: math.MaxUint32, last: math.MaxUint32}
	x.Add(1<<32, Loc{}, "big")
	if info, _ := x.Subj.Get("big"); info.Msgs != 1<<32 {
		t.Fatalf("count %d, want 2^32", info.Msgs)
	}
	back, _, err := Decode("mem", Encode(x, nil))
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := back.Subj.Get("big"); info.Msgs != 1<<32 || info.First != 1 || info.Last != 1<<32 {
		t.Fatalf("decoded %+v", info)
	}
	x.Remove(2, "big")
	if info, _ := x.Subj.Get("big"); info.Msgs != 1<<32-1 || len(x.Subj.over) != 0 {
		t.Fatalf("after a removal: count %d, overflow map %v", info.Msgs, x.Subj.over)
	}
}

// TestSubjectsZeroValue: a zero Subjects answers and grows like a new one.
func TestSubjectsZeroValue(t *testing.T) {
	var x Subjects
	if _, ok := x.Get("a"); ok || x.Len() != 0 {
		t.Fatal("zero Subjects has a subject")
	}
	x.Remove("a", 1, alwaysLive)
	x.Add("a", 1)
	x.AddBytes([]byte("b"), 2)
	if info, ok := x.Get("b"); !ok || info != (SubjectInfo{1, 2, 2}) || x.Len() != 2 {
		t.Fatalf("b: %+v %v, Len %d", info, ok, x.Len())
	}
}
