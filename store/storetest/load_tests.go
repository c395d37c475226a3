package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jetwal/jetwal/store"
)

var loadTests = []suiteTest{
	{"Load/NotFound", testLoadNotFound},
	{"Load/ReusesBuffers", testLoadReusesBuffers},
	{"LoadNext", testLoadNext},
	{"LoadLast", testLoadLast},
	{"LoadPrev", testLoadPrev},
	{"Load/InvalidFilter", testLoadInvalidFilter},
	{"Load/ManySubjects", testLoadManySubjects},
}

// fixtureSubjects is the store most load and state tests start from:
// sequence i+1 holds fixtureSubjects[i].
var fixtureSubjects = []string{
	"a.x", "a.y", "b.x", "a.x", "c.d.e", "b.y", "a.x", "c.d.f", "b.x", "a.y",
}

// fixtureFilters are the filters checked exhaustively against the oracles.
var fixtureFilters = []string{
	"", ">", "a.x", "a.y", "b.x", "a.*", "b.*", "*.x", "*.y", "c.>", "c.*", "c.d.*",
	"*.*.f", "*.>", "*", "a", "a.x.>", "zzz", "c.d.e",
}

func newFixture(t *testing.T, open openFunc) *harness {
	h := newHarness(t, open, store.Limits{})
	h.fill(fixtureSubjects...)
	return h
}

func testLoadNotFound(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	var m store.Msg
	for _, seq := range []uint64{0, 1, 2, 1 << 40} {
		wantErr(t, fmt.Sprintf("Load(%d) on empty store", seq), h.s.Load(seq, &m), store.ErrNotFound)
	}
	h.fill("a", "b", "c")
	h.del(2)
	for _, seq := range []uint64{0, 2, 4, 100} {
		wantErr(t, fmt.Sprintf("Load(%d)", seq), h.s.Load(seq, &m), store.ErrNotFound)
	}
	if got := h.load(3); got.Subject != "c" {
		t.Fatalf("Load(3) subject %q", got.Subject)
	}
}

func testLoadReusesBuffers(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	h.append("r", []byte("NATS/1.0\r\n\r\n"), []byte("0123456789"))
	h.append("r", nil, []byte("ab"))
	m := store.Msg{Header: make([]byte, 0, 64), Data: make([]byte, 0, 64)}
	hdrPtr, dataPtr := &m.Header[:1][0], &m.Data[:1][0]
	if err := h.s.Load(1, &m); err != nil {
		t.Fatal(err)
	}
	if &m.Header[0] != hdrPtr || &m.Data[0] != dataPtr {
		t.Fatal("Load did not reuse the Msg's buffers although they were large enough")
	}
	if string(m.Data) != "0123456789" {
		t.Fatalf("data %q", m.Data)
	}
	// Loading a message without header into a Msg that had one must clear it.
	if err := h.s.LoadNext("", 2, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Header) != 0 || string(m.Data) != "ab" || m.Seq != 2 {
		t.Fatalf("stale fields after reuse: %s", FormatMsg(&m))
	}
}

// loadCase is one row of the Load* tables; want 0 means "none".
type loadCase struct {
	filter string
	seq    uint64
	want   uint64
}

func runLoadTable(t *testing.T, name string, cases []loadCase, none error, load func(filter string, seq uint64, m *store.Msg) error) {
	t.Helper()
	for _, c := range cases {
		var m store.Msg
		err := load(c.filter, c.seq, &m)
		what := fmt.Sprintf("%s(%q, %d)", name, c.filter, c.seq)
		checkLoad(t, what, &m, err, c.want, c.want != 0, none)
		if c.want != 0 && m.Subject != fixtureSubjects[c.want-1] {
			t.Fatalf("%s: subject %q, want %q", what, m.Subject, fixtureSubjects[c.want-1])
		}
	}
}

func testLoadNext(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	runLoadTable(t, "LoadNext", []loadCase{
		{"", 0, 1}, {"", 1, 1}, {"", 10, 10}, {"", 11, 0}, {"", 1000, 0},
		{">", 5, 5}, {"a.x", 0, 1}, {"a.x", 2, 4}, {"a.x", 8, 0},
		{"a.*", 3, 4}, {"a.*", 8, 10}, {"*.x", 4, 4}, {"*.x", 5, 7}, {"*.y", 7, 10},
		{"c.>", 1, 5}, {"c.>", 6, 8}, {"c.*", 1, 0}, {"c.d.*", 6, 8}, {"*.*.f", 0, 8},
		{"a", 0, 0}, {"zzz", 0, 0}, {"a.x.>", 0, 0}, {"*", 0, 0}, {"*.>", 9, 9},
	}, store.ErrEOF, h.s.LoadNext)
	checkQueries(t, h.s, fixtureFilters, allStarts(h.s))

	h.del(4)
	h.del(1)
	h.del(10)
	runLoadTable(t, "LoadNext after deletes", []loadCase{
		{"", 0, 2}, {"a.x", 0, 7}, {"a.x", 2, 7}, {"a.*", 8, 0}, {"", 10, 0}, {"*.y", 7, 0},
	}, store.ErrEOF, h.s.LoadNext)
	checkQueries(t, h.s, fixtureFilters, allStarts(h.s))
}

func testLoadLast(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	last := func(filter string, _ uint64, m *store.Msg) error { return h.s.LoadLast(filter, m) }
	runLoadTable(t, "LoadLast", []loadCase{
		{"", 0, 10}, {">", 0, 10}, {"a.x", 0, 7}, {"c.>", 0, 8}, {"*.y", 0, 10},
		{"b.*", 0, 9}, {"c.d.e", 0, 5}, {"zzz", 0, 0}, {"c.*", 0, 0},
	}, store.ErrNotFound, last)
	h.del(10)
	h.del(7)
	runLoadTable(t, "LoadLast after deletes", []loadCase{
		{"", 0, 9}, {"a.y", 0, 2}, {"*.y", 0, 6}, {"a.x", 0, 4}, {"a.*", 0, 4},
	}, store.ErrNotFound, last)
	if _, err := h.s.Purge("", 0, 0); err != nil {
		t.Fatal(err)
	}
	runLoadTable(t, "LoadLast after purge", []loadCase{{"", 0, 0}, {"a.x", 0, 0}, {"a.*", 0, 0}}, store.ErrNotFound, last)
}

func testLoadPrev(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	runLoadTable(t, "LoadPrev", []loadCase{
		{"", 10, 10}, {"", 100, 10}, {"", 1, 1}, {"", 0, 0}, {"a.x", 6, 4}, {"a.x", 0, 0},
		{"a.x", 1, 1}, {"b.*", 5, 3}, {"c.>", 4, 0}, {"*.y", 9, 6}, {"zzz", 10, 0},
	}, store.ErrEOF, h.s.LoadPrev)
	h.del(1)
	h.del(6)
	runLoadTable(t, "LoadPrev after deletes", []loadCase{
		{"", 1, 0}, {"", 6, 5}, {"a.x", 3, 0}, {"*.y", 9, 2}, {"b.y", 10, 0},
	}, store.ErrEOF, h.s.LoadPrev)
	checkQueries(t, h.s, fixtureFilters, allStarts(h.s))
}

func testLoadInvalidFilter(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	var m store.Msg
	for _, f := range []string{"a..b", "a.>.b", ".a", "a.", "a b", "a\tb"} {
		wantErr(t, "LoadNext("+f+")", h.s.LoadNext(f, 0, &m), store.ErrInvalidSubject)
		wantErr(t, "LoadLast("+f+")", h.s.LoadLast(f, &m), store.ErrInvalidSubject)
		wantErr(t, "LoadPrev("+f+")", h.s.LoadPrev(f, 10, &m), store.ErrInvalidSubject)
		if n := h.s.NumPending(0, f, false); n != 0 {
			t.Fatalf("NumPending(%q) = %d, want 0", f, n)
		}
		if ss := h.s.SubjectsState(f); len(ss) != 0 {
			t.Fatalf("SubjectsState(%q) = %v, want empty", f, ss)
		}
	}
}

// testLoadManySubjects checks the Load family where a match can be far away
// and subjects are many, the case where stores switch from scanning to a
// subject index.
func testLoadManySubjects(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	const perBlock, fan = 1500, 200
	var subjects []string
	for i := 0; i < perBlock; i++ {
		subjects = append(subjects, fmt.Sprintf("blk.a.%d", i%fan))
	}
	for i := 0; i < perBlock; i++ {
		subjects = append(subjects, fmt.Sprintf("blk.b.%d", i%fan))
	}
	for i := 0; i < 300; i++ {
		subjects = append(subjects, fmt.Sprintf("tail.%d.x", i%3))
	}
	h.fill(subjects...)
	rng := rand.New(rand.NewPCG(7, 7))
	for range 400 {
		seq := 1 + rng.Uint64N(uint64(len(subjects)))
		if err := h.s.Delete(seq, false); err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
	}
	filters := []string{
		"", "blk.b.*", "blk.a.*", "blk.*.7", "blk.b.199", "blk.>", "*.*.x", "tail.>",
		"tail.2.*", "nope.*", "blk.a.>", "*.b.*",
	}
	last := uint64(len(subjects))
	starts := []uint64{0, 1, 2, 700, perBlock, perBlock + 1, perBlock + 3, 2*perBlock - 5, 2 * perBlock, last - 1, last, last + 1}
	for i := uint64(5); i < last; i += 97 {
		starts = append(starts, i)
	}
	checkQueries(t, h.s, filters, starts)
	h.check()
}
