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
// Among those, the ones holding the fewest streams come first. With a
// unique tag prefix (Config.UniqueTag, jetstream { unique_tag }), a
// server must have a tag of that prefix and no two servers of a stream
// share its value (one replica per availability zone, say); a placement
// that names a tag of that prefix itself turns the rule off, as in
// nats-server. When too few qualify, the answer is nats-server's 10005,
// with its reasons.

// excludePlacementTag marks a server that takes no streams.
const excludePlacementTag = "!jetstream"

// placementError gathers why servers were passed over, worded as
// nats-server words them.
type placementError struct {
	offline, excludeTag, notUnique bool
	missing, excluded              []string
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
	if e.notUnique {
		b.WriteString(", server tag not unique")
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
	if p := cfg.Placement; p != nil && p.Cluster != "" && p.Cluster != js.cl.c.Name() {
		return nil, perr.apiError() // nats-server finds no server there
	}
	want, exclude := placementTags(cfg.Placement)
	uniq := uniquePrefix(js.cfg.UniqueTag, want, exclude)
	used := map[string]bool{} // values of the unique tag taken
	if uniq != "" {
		for _, p := range existing {
			used[tagWithPrefix(js.cl.c.Tags(p), uniq)] = true
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
		if uniq != "" && tagWithPrefix(tags, uniq) == "" {
			perr.notUnique = true
			continue
		}
		cands = append(cands, p)
	}
	need := replicas - len(existing)
	if len(cands) < need {
		return nil, perr.apiError()
	}
	sort.SliceStable(cands, func(i, j int) bool { return load[cands[i]] < load[cands[j]] })
	picked := slices.Clone(existing)
	for _, p := range cands {
		if len(picked) == replicas {
			break
		}
		if uniq != "" {
			v := tagWithPrefix(js.cl.c.Tags(p), uniq)
			if used[v] {
				perr.notUnique = true
				continue
			}
			used[v] = true
		}
		picked = append(picked, p)
	}
	if len(picked) < replicas {
		return nil, perr.apiError()
	}
	return slices.Sorted(slices.Values(picked)), nil
}

// placementTags splits a placement's tags into the wanted and the
// excluded ("!tag") ones, lower-cased as server tags are kept.
func placementTags(p *api.Placement) (want, exclude []string) {
	if p == nil {
		return nil, nil
	}
	for _, t := range p.Tags {
		if x, ok := strings.CutPrefix(t, "!"); ok {
			exclude = append(exclude, strings.ToLower(x))
		} else {
			want = append(want, strings.ToLower(t))
		}
	}
	return want, exclude
}

// fitsPlacement reports whether server peer may hold a stream of cfg's
// placement by its cluster and tags (placeStream's rules, without the
// route and load, which matter only for picking new servers).
func (js *JetStream) fitsPlacement(peer string, cfg *api.StreamConfig) bool {
	if p := cfg.Placement; p != nil && p.Cluster != "" && p.Cluster != js.cl.c.Name() {
		return false
	}
	tags := js.cl.c.Tags(peer)
	if slices.Contains(tags, excludePlacementTag) {
		return false
	}
	want, exclude := placementTags(cfg.Placement)
	_, bad := firstMismatch(tags, want, exclude)
	return bad == 0
}

// uniquePrefix is the unique tag prefix placement applies: prefix, unless
// the placement names a tag of that prefix (wanted or excluded), which
// turns the rule off as in nats-server; "" = no rule.
func uniquePrefix(prefix string, want, exclude []string) string {
	if prefix == "" {
		return ""
	}
	for _, t := range slices.Concat(want, exclude) {
		if strings.HasPrefix(t, prefix) {
			return ""
		}
	}
	return prefix
}

// tagWithPrefix is a server's first tag with prefix, "" when it has none.
func tagWithPrefix(tags []string, prefix string) string {
	for _, t := range tags {
		if strings.HasPrefix(t, prefix) {
			return t
		}
	}
	return ""
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
