package validate

import (
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/subject"
	"github.com/jetwal/jetwal/subject/transform"
)

// CheckTransforms validates a stream's subject_transform and republish as
// nats-server does, and fills in republish's defaults (an empty source is
// ">"; ">" to ">" on a stream whose only subject is the transform's source
// republishes the transformed subjects). cfg.Subjects must be set.
func CheckTransforms(cfg *api.StreamConfig) *api.ApiError {
	if tr := cfg.SubjectTransform; tr != nil {
		if tr.Source != "" && !subject.ValidFilter(tr.Source) {
			return api.Errorf(api.ErrStreamTransformSource, "stream transform source: %v %s", transform.ErrBadSubject, tr.Source)
		}
		if err := transform.Validate(tr.Source, tr.Destination); err != nil {
			return api.Errorf(api.ErrStreamTransformDest, "stream transform: %v", err)
		}
	}
	rp := cfg.RePublish
	if rp == nil {
		return nil
	}
	if rp.Source == "" {
		rp.Source = ">"
	}
	if tr := cfg.SubjectTransform; rp.Source == ">" && rp.Destination == ">" && tr != nil &&
		len(cfg.Subjects) == 1 && tr.Source == cfg.Subjects[0] {
		rp.Source, rp.Destination = tr.Destination, tr.Destination
	}
	for _, s := range cfg.Subjects {
		if rp.Destination == s || subject.Overlap(rp.Destination, s) {
			return InvalidConfig("stream configuration for republish destination forms a cycle")
		}
	}
	if _, err := transform.New(rp.Source, rp.Destination); err != nil {
		return InvalidConfig("stream configuration for republish with transform from '%s' to '%s' not valid", rp.Source, rp.Destination)
	}
	return nil
}
