package validate

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/subject"
	"github.com/jetwal/jetwal/subject/transform"
)

// Mirrors and sources: their configuration. The stream config keeps them
// as raw JSON (so configs compare and clone as they came); these decode
// and check them, with nats-server's errors.

func RawPresent(raw []byte) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null" && s != "[]" && s != "{}"
}

// Sources decodes cfg's mirror (nil when none) and sources.
func Sources(cfg *api.StreamConfig) (mirror *api.StreamSource, sources []api.StreamSource, aerr *api.ApiError) {
	if RawPresent(cfg.Mirror) {
		mirror = new(api.StreamSource)
		if err := strictDecode(cfg.Mirror, mirror); err != nil {
			return nil, nil, InvalidConfig("invalid mirror configuration: %v", err)
		}
	}
	if RawPresent(cfg.Sources) {
		if err := strictDecode(cfg.Sources, &sources); err != nil {
			return nil, nil, InvalidConfig("invalid sources configuration: %v", err)
		}
	}
	return mirror, sources, nil
}

func strictDecode(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	return d.Decode(v)
}

// CheckSources validates a stream's mirror and sources (Stream).
func CheckSources(cfg *api.StreamConfig, domain string) *api.ApiError {
	mirror, sources, aerr := Sources(cfg)
	if aerr != nil {
		return aerr
	}
	if mirror != nil {
		switch {
		case len(cfg.Subjects) > 0:
			return api.NewError(api.ErrMirrorWithSubjects)
		case len(sources) > 0:
			return api.NewError(api.ErrMirrorWithSources)
		case !validName(mirror.Name):
			return api.NewError(api.ErrMirrorInvalidStreamName)
		case mirror.OptStartSeq > 0 && mirror.OptStartTime != nil:
			return api.NewError(api.ErrMirrorWithStartSeqAndTime)
		case cfg.FirstSeq > 0:
			return api.NewError(api.ErrMirrorWithFirstSeq)
		case cfg.AllowMsgCounter:
			return api.NewError(api.ErrMirrorWithCounters)
		}
		if !durableSourceOK(mirror) {
			return api.NewError(api.ErrMirrorConsumerCfgInvalid)
		}
		if aerr := checkSource(mirror, "mirror"); aerr != nil {
			return aerr
		}
	}
	seen := map[string]bool{}
	seenConsumer := map[string]bool{}
	for i := range sources {
		src := &sources[i]
		if !validName(src.Name) {
			return api.NewError(api.ErrSourceInvalidStreamName)
		}
		// As nats-server, sources of one origin differ by filter or
		// transforms (the key jetwal's Nats-Stream-Source header carries);
		// nats-server also tells apart sources differing only by their
		// durable consumer, which jetwal refuses as duplicates.
		key := src.Name + " " + src.FilterSubject
		for _, tr := range src.SubjectTransforms {
			key += " " + tr.Source + "\f" + tr.Destination
		}
		if seen[key] {
			return api.NewError(api.ErrSourceDuplicate)
		}
		seen[key] = true
		if !durableSourceOK(src) {
			return api.NewError(api.ErrSourceConsumerCfgInvalid)
		}
		if src.Consumer != nil {
			// One origin consumer feeds one source only.
			ckey := src.Name + " " + src.Consumer.Name
			if seenConsumer[ckey] {
				return api.NewError(api.ErrSourceConsumerDuplicate)
			}
			seenConsumer[ckey] = true
		}
		if aerr := checkSource(src, "source"); aerr != nil {
			return aerr
		}
	}
	// As nats-server, once every source is checked: the external API
	// prefixes, which must be subjects and must not be this server's own
	// $JS.API (a mirror or source of a local stream names no external).
	for _, src := range append([]api.StreamSource{ptrOr(mirror)}, sources...) {
		if src.External == nil || src.External.APIPrefix == "" {
			continue
		}
		pfx := src.External.APIPrefix
		if !subject.ValidLiteral(pfx) {
			return InvalidConfig("stream external api prefix %q must be a valid subject without wildcards", pfx)
		}
		if subject.Overlap(pfx, jsAPIPrefix) {
			return api.Errorf(api.ErrStreamExternalAPIOverlap, "stream external api prefix %s must not overlap with %s", pfx, jsAPIPrefix)
		}
	}
	for _, src := range append([]api.StreamSource{ptrOr(mirror)}, sources...) {
		if src.External != nil && !localAPI(src.External.APIPrefix, domain) {
			return InvalidConfig("external mirrors and sources (other accounts or domains) are not supported by jetwal")
		}
	}
	if cfg.MirrorDirect && mirror == nil {
		return MirrorDirectWithoutMirror()
	}
	return nil
}

// jsAPIPrefix is the JetStream API's subject prefix (nats-server's
// JSApiPrefix), which no external prefix may overlap.
const jsAPIPrefix = "$JS.API"

// ptrOr is *p, or the zero source for nil.
func ptrOr(p *api.StreamSource) api.StreamSource {
	if p == nil {
		return api.StreamSource{}
	}
	return *p
}

// MirrorDirectWithoutMirror is nats-server's refusal of mirror_direct on a
// stream that mirrors nothing.
func MirrorDirectWithoutMirror() *api.ApiError {
	return InvalidConfig("stream has no mirror but does have mirror direct")
}

// durableSourceOK checks a mirror's or source's durable consumer (ADR-60)
// as nats-server does: a consumer name, a literal deliver subject, and no
// start position or filter of the source's own (the consumer has them).
func durableSourceOK(src *api.StreamSource) bool {
	c := src.Consumer
	if c == nil {
		return true
	}
	return ConsumerName(c.Name) && subject.ValidLiteral(c.DeliverSubject) &&
		src.OptStartSeq == 0 && src.OptStartTime == nil && src.FilterSubject == ""
}

// checkSource refuses what jetwal does not do with a mirror or source.
func checkSource(src *api.StreamSource, what string) *api.ApiError {
	if src.FilterSubject != "" && !subject.ValidFilter(src.FilterSubject) {
		return InvalidConfig("invalid filter subject %q in source %s", src.FilterSubject, src.Name)
	}
	if len(src.SubjectTransforms) > 0 && src.FilterSubject != "" {
		return InvalidConfig("%s with multiple subject transforms cannot also have a single subject filter", what)
	}
	for _, tr := range src.SubjectTransforms {
		if err := transform.Validate(tr.Source, tr.Destination); err != nil {
			return InvalidConfig("%s transform: %v", what, err)
		}
	}
	// Transforms whose sources overlap are refused as nats-server refuses
	// them: a mirror's when some subject matches two of them (10152), a
	// source's when one is a subset of another (10147). An empty source
	// (every subject) overlaps only another empty one in a mirror, and
	// nothing in a source, as in nats-server.
	trs := src.SubjectTransforms
	for i := range trs {
		for j := range trs {
			if i == j {
				continue
			}
			a, b := trs[i].Source, trs[j].Source
			if what == "mirror" && transformsCollide(a, b) {
				return api.NewError(api.ErrMirrorOverlappingFilters)
			}
			if what != "mirror" && a != "" && b != "" && subject.SubsetOf(a, b) {
				return api.NewError(api.ErrSourceOverlappingFilters)
			}
		}
	}
	return nil
}

// transformsCollide reports whether some subject matches both of two
// transform sources ("" matching only "", as nats-server compares them).
func transformsCollide(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	return subject.Overlap(a, b)
}

// localAPI reports whether an external API prefix names this server's own
// JetStream API (with or without its domain).
func localAPI(prefix, domain string) bool {
	prefix = strings.TrimSuffix(prefix, ".")
	return prefix == "$JS.API" || (domain != "" && prefix == "$JS."+domain+".API")
}
