package jetstream

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// placementCluster is the part of a Cluster placement reads: members,
// their tags and routes, and the meta map's assignments. Any other method
// is the embedded nil interface's, and panics: placement must not call it.
type placementCluster struct {
	Cluster
	tags    map[string][]string
	offline map[string]bool
	meta    map[string][]byte
}

func (c *placementCluster) Name() string { return "C1" }
func (c *placementCluster) Peers() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for p := range c.tags {
			if !yield(p) {
				return
			}
		}
	})
}
func (c *placementCluster) Connected(p string) bool { return !c.offline[p] }
func (c *placementCluster) Tags(p string) []string  { return c.tags[p] }
func (c *placementCluster) Get(k string) ([]byte, bool) {
	b, ok := c.meta[k]
	return b, ok
}
func (c *placementCluster) Keys(prefix string) []string {
	var out []string
	for k := range c.meta {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestPlaceStreamUniqueTag: with unique_tag, a stream's servers each have
// a tag of the prefix, each a different value; servers without one are
// passed over; the servers it already has reserve their values; a
// placement naming a tag of the prefix turns the rule off; too few
// distinct values get nats-server's 10005 with "server tag not unique".
func TestPlaceStreamUniqueTag(t *testing.T) {
	cl := &placementCluster{
		tags: map[string][]string{
			"a1": {"az:1", "ssd"}, "a2": {"az:1"}, "b1": {"az:2", "ssd"}, "b2": {"az:2"},
			"c1": {"az:3"}, "none": {"ssd"},
		},
		meta: map[string][]byte{},
	}
	js := &JetStream{env: env{cfg: Config{UniqueTag: "az:"}}, cl: &clustering{c: cl}}
	zones := func(peers []string) []string {
		var out []string
		for _, p := range peers {
			out = append(out, tagWithPrefix(cl.tags[p], "az:"))
		}
		slices.Sort(out)
		return out
	}
	cfg := &api.StreamConfig{Name: "S"}

	// Load steers the choice: a1, b1 and c1 hold a stream each, so the
	// least loaded servers (a2, b2) are preferred, and the third zone's
	// only server (c1) must come in anyway.
	asg, _ := json.Marshal(streamAssignment{Config: api.StreamConfig{Name: "L"}, Peers: []string{"a1", "b1", "c1"}})
	cl.meta[streamKeyPrefix+"L"] = asg
	got, aerr := js.placeStream(cfg, 3, nil, nil)
	if aerr != nil || !slices.Equal(zones(got), []string{"az:1", "az:2", "az:3"}) || slices.Contains(got, "none") {
		t.Fatalf("R3: %v %v", got, aerr)
	}
	if !slices.Contains(got, "a2") || !slices.Contains(got, "b2") {
		t.Fatalf("R3 %v: want the less loaded a2 and b2", got)
	}

	// Existing servers reserve their zones: with a1 and c1 kept, only a
	// server of az:2 may join.
	got, aerr = js.placeStream(cfg, 3, []string{"a1", "c1"}, nil)
	if aerr != nil || !slices.Equal(zones(got), []string{"az:1", "az:2", "az:3"}) {
		t.Fatalf("R3 from a1, c1: %v %v", got, aerr)
	}

	// Four replicas need four zones: refused, with nats-server's reason.
	_, aerr = js.placeStream(cfg, 4, nil, nil)
	if aerr == nil || aerr.ErrCode != api.ErrClusterNoPeers || !strings.Contains(aerr.Description, "server tag not unique") {
		t.Fatalf("R4: %v", aerr)
	}
	// Two servers of az:1 and one of az:2 only (placement tag ssd: a1, b1,
	// none; none lacks a zone): R2 fits, R3 does not.
	ssd := &api.StreamConfig{Name: "S", Placement: &api.Placement{Tags: []string{"ssd"}}}
	got, aerr = js.placeStream(ssd, 2, nil, nil)
	if aerr != nil || !slices.Equal(got, []string{"a1", "b1"}) {
		t.Fatalf("R2 ssd: %v %v", got, aerr)
	}
	if _, aerr = js.placeStream(ssd, 3, nil, nil); aerr == nil || !strings.Contains(aerr.Description, "server tag not unique") {
		t.Fatalf("R3 ssd: %v", aerr)
	}

	// Naming a zone in the placement turns the rule off: both az:1
	// servers may hold the stream.
	az1 := &api.StreamConfig{Name: "S", Placement: &api.Placement{Tags: []string{"AZ:1"}}}
	got, aerr = js.placeStream(az1, 2, nil, nil)
	if aerr != nil || !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("R2 az:1: %v %v", got, aerr)
	}

	// Without unique_tag, zones may repeat and untagged servers count.
	js.cfg.UniqueTag = ""
	got, aerr = js.placeStream(cfg, 6, nil, nil)
	if aerr != nil || len(got) != 6 {
		t.Fatalf("R6 without unique_tag: %v %v", got, aerr)
	}
}
