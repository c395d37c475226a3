package jetstream

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestAssignmentsCached: a scan of the assignments decodes only what
// changed since the last one, and always returns what the meta map holds
// now: updated assignments as updated, deleted ones gone; changing a
// returned assignment through withPeers leaves the next scan's alone.
func TestAssignmentsCached(t *testing.T) {
	cl := &placementCluster{meta: map[string][]byte{}}
	js := &JetStream{cl: &clustering{c: cl}}
	put := func(a streamAssignment) {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		cl.meta[streamKeyPrefix+a.Config.Name] = b
	}
	const n = 200
	for i := range n {
		put(streamAssignment{Config: api.StreamConfig{Name: fmt.Sprintf("S%03d", i), Subjects: []string{fmt.Sprintf("s.%d", i)}},
			Peers: []string{"a", "b", "c"}, Initial: []string{"a", "b", "c"}})
	}
	if got := js.assignments(); len(got) != n || got[7].Config.Name != "S007" || got[7].Config.Subjects[0] != "s.7" {
		t.Fatalf("first scan: %d assignments, [7] = %+v", len(got), got[7].Config)
	}
	// Nothing changed: no decoding (about 30 allocations each).
	if allocs := testing.AllocsPerRun(5, func() { js.assignments() }); allocs > n {
		t.Fatalf("a scan with nothing changed made %.0f allocations for %d assignments", allocs, n)
	}

	put(streamAssignment{Config: api.StreamConfig{Name: "S007", Subjects: []string{"s.seven"}}, Peers: []string{"a", "b", "d"}})
	delete(cl.meta, streamKeyPrefix+"S008")
	got := js.assignments()
	if len(got) != n-1 || got[7].Config.Subjects[0] != "s.seven" || !slices.Equal(got[7].Peers, []string{"a", "b", "d"}) || got[8].Config.Name != "S009" {
		t.Fatalf("after an update and a delete: %d assignments, [7] = %+v %v, [8] = %s", len(got), got[7].Config, got[7].Peers, got[8].Config.Name)
	}
	if len(js.cl.asgs.m) != n-1 {
		t.Fatalf("cache holds %d entries for %d assignments", len(js.cl.asgs.m), n-1)
	}

	moved := got[0].withPeers([]string{"a", "d", "e"})
	if !slices.Equal(moved.Initial, []string{"a"}) {
		t.Fatalf("withPeers: initial %v", moved.Initial)
	}
	if again := js.assignments(); !slices.Equal(again[0].Initial, []string{"a", "b", "c"}) || !slices.Equal(again[0].Peers, []string{"a", "b", "c"}) {
		t.Fatalf("withPeers changed the cached assignment: %v %v", again[0].Peers, again[0].Initial)
	}
}
