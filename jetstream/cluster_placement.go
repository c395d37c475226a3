package jetstream

import (
	"slices"
	"sort"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Stream placement, as nats-server's meta leader does it (selectPeerGroup):
// a replicated stream's servers are picked among the connected members of
// the meta group that are in the cluster the placement names (there is
// one: this one) and whose server tags (server_tags, announced through the
// meta map) include every tag the placement asks for and none of the tags
// it excludes ("!tag"). A server tagged "!jetstream" is never picked.
// Among those, the ones holding the fewest streams come first. When too
// few qualify, the answer is nats-server's 10005, with its reasons.

// excludePlacementTag marks a server that takes no streams.
const excludePlacementTag = "!jetstream"

// placementError gathers why servers were passed over, worded as
// nats-server words them.
type placementError struct {
	offline, excludeTag bool
	missing, excluded   []string
}

func (e *placementError) apiError() *api.ApiError {
	var b strings.Builder
	b.WriteString("no suitable peers for placement")
	if e.offline {
		b.WriteString(", peer offline")
	}
	if e.excludeTag {
		b.WriteString(", exclude tag set")
	}
	list := func(label string, tags []string) {
		if len(tags) == 0 {
			return
		}
		slices.Sort(tags)
		b.WriteString(", " + label + " [")
		for i, t := range slices.Compact(tags) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("'" + t + "'")
		}
		b.WriteString("]")
	}
	list("tags not matched", e.missing)
	list("tags excluded", e.excluded)
	return &api.ApiError{Code: 400, ErrCode: api.ErrClusterNoPeers, Description: b.String()}
}

// placeStream returns the servers of a stream of cfg's placement with
// replicas members: existing (the servers holding it now, kept) and as
// many more as needed, none of them in avoid. The result is sorted.
func (js *JetStream) placeStream(cfg *api.StreamConfig, replicas int, existing, avoid []string) ([]string, *api.ApiError) {
	if len(existing) >= replicas {
		return slices.Sorted(slices.Values(existing[:replicas])), nil
	}
	var perr placementError
	var want, exclude []string
	if p := cfg.Placement; p != nil {
		if p.Cluster != "" && p.Cluster != js.cl.c.Name() {
			return nil, perr.apiError() // nats-server finds no server there
		}
		for _, t := range p.Tags {
			if x, ok := strings.CutPrefix(t, "!"); ok {
				exclude = append(exclude, strings.ToLower(x))
			} else {
				want = append(want, strings.ToLower(t))
			}
		}
	}
	load := map[string]int{}
	for _, a := range js.assignments() {
		for _, p := range a.Peers {
			load[p]++
		}
	}
	var cands []string
	for _, p := range js.cl.c.Peers() {
		if slices.Contains(existing, p) || slices.Contains(avoid, p) {
			continue
		}
		if !js.cl.c.Connected(p) {
			perr.offline = true
			continue
		}
		tags := js.cl.c.Tags(p)
		if slices.Contains(tags, excludePlacementTag) {
			perr.excludeTag = true
			continue
		}
		if t, bad := firstMismatch(tags, want, exclude); bad != 0 {
			if bad < 0 {
				perr.missing = append(perr.missing, t)
			} else {
				perr.excluded = append(perr.excluded, t)
			}
			continue
		}
		cands = append(cands, p)
	}
	need := replicas - len(existing)
	if len(cands) < need {
		return nil, perr.apiError()
	}
	sort.SliceStable(cands, func(i, j int) bool { return load[cands[i]] < load[cands[j]] })
	return slices.Sorted(slices.Values(append(slices.Clone(existing), cands[:need]...))), nil
}

// firstMismatch reports the first placement tag a server's tags fail:
// bad < 0 for a wanted tag it lacks, > 0 for an excluded tag it has.
func firstMismatch(tags, want, exclude []string) (tag string, bad int) {
	for _, t := range want {
		if !slices.Contains(tags, t) {
			return t, -1
		}
	}
	for _, t := range exclude {
		if slices.Contains(tags, t) {
			return t, 1
		}
	}
	return "", 0
}

// lowerTags lower-cases requested tags, as server tags are kept.
func lowerTags(tags []string) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = strings.ToLower(t)
	}
	return out
}
