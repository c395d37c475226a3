package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/subject"
)

// Limits of a stream config, as nats-server enforces them.
const (
	maxNameLen        = 255
	maxDescriptionLen = 4 * 1024
	maxMetadataLen    = 128 * 1024
	minWindow         = 100 * time.Millisecond
	maxReplicas       = 5
	// DefaultDuplicateWindow is the dedupe window of a stream that sets none.
	DefaultDuplicateWindow = 2 * time.Minute
)

// reservedNamespaces may only be captured by a stream with no_ack set, since
// acknowledging an API request or a system event with a PubAck would answer
// it. $JS.EVENT.> and $SYS.ACCOUNT.> are the allowed exceptions, as in
// nats-server.
var reservedNamespaces = []struct{ filter, allowed string }{
	{"$JS.API.>", ""},
	{"$JS.ACK.>", ""},
	{"$JS.FC.>", ""},
	{"$JSC.>", ""},
	{"$JS.>", "$JS.EVENT.>"},
	{"$SYS.>", "$SYS.ACCOUNT.>"},
}

func InvalidConfig(format string, args ...any) *api.ApiError {
	return api.Errorf(api.ErrStreamInvalidConfig, format, args...)
}

// validName reports whether name may name a stream (or a consumer): not empty
// and free of '.', '*', '>', whitespace and control characters. Path
// separators are reported separately by checkName.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '.', c == '*', c == '>', c == ' ', c == '\t', c == '\r', c == '\n', c < 0x20, c == 0x7f:
			return false
		}
	}
	return true
}

func checkName(name string) *api.ApiError {
	if strings.ContainsAny(name, `/\`) {
		return api.NewError(api.ErrStreamNamePathSeparators)
	}
	if !validName(name) {
		return InvalidConfig("stream name is required and can not contain '.', '*', '>' or whitespace")
	}
	if len(name) > maxNameLen {
		return InvalidConfig("stream name is too long, maximum allowed is %d", maxNameLen)
	}
	return nil
}

// Stream checks a requested stream config and fills in nats-server's
// defaults. It returns a new config; req is not modified.
//
// A replica count of 2 to 5 passes here: as nats-server, the API handlers
// refuse it afterwards with ErrReplicasNotSupported (see Replicas).
//
// Defaults: storage file, one replica, -1 (unlimited) for max msgs, bytes,
// msgs per subject, msg size and consumers, a duplicate window of two minutes
// (or max age when that is shorter), subjects [name] when none are given.
func Stream(req *api.StreamConfig) (api.StreamConfig, *api.ApiError) {
	if aerr := checkName(req.Name); aerr != nil {
		return api.StreamConfig{}, aerr
	}
	if len(req.Description) > maxDescriptionLen {
		return api.StreamConfig{}, InvalidConfig("stream description is too long, maximum allowed is %d", maxDescriptionLen)
	}
	mdLen := 0
	for k, v := range req.Metadata {
		mdLen += len(k) + len(v)
	}
	if mdLen > maxMetadataLen {
		return api.StreamConfig{}, InvalidConfig("stream metadata exceeds maximum size of %d bytes", maxMetadataLen)
	}

	cfg := req.Clone()
	if aerr := rejectUnsupported(&cfg); aerr != nil {
		return api.StreamConfig{}, aerr
	}
	if cfg.Storage == api.StorageUnset {
		cfg.Storage = api.FileStorage
	}
	switch {
	case cfg.Replicas == 0:
		cfg.Replicas = 1
	case cfg.Replicas < 0:
		return api.StreamConfig{}, api.NewError(api.ErrReplicasNegative)
	case cfg.Replicas > maxReplicas:
		return api.StreamConfig{}, InvalidConfig("maximum replicas is %d", maxReplicas)
	}
	unlimited := func(v *int64) {
		if *v == 0 || *v < -1 {
			*v = -1
		}
	}
	unlimited(&cfg.MaxMsgs)
	unlimited(&cfg.MaxMsgsPer)
	unlimited(&cfg.MaxBytes)
	if cfg.MaxMsgSize == 0 || cfg.MaxMsgSize < -1 {
		cfg.MaxMsgSize = -1
	}
	if cfg.MaxConsumers == 0 || cfg.MaxConsumers < -1 {
		cfg.MaxConsumers = -1
	}

	if cfg.MaxAge < 0 {
		return api.StreamConfig{}, InvalidConfig("max age can not be negative")
	}
	if cfg.MaxAge != 0 && cfg.MaxAge < minWindow {
		return api.StreamConfig{}, InvalidConfig("max age needs to be >= 100ms")
	}
	if cfg.Duplicates == 0 {
		cfg.Duplicates = DefaultDuplicateWindow
		if cfg.MaxAge != 0 && cfg.MaxAge < cfg.Duplicates {
			cfg.Duplicates = cfg.MaxAge
		}
	}
	switch {
	case cfg.Duplicates < 0:
		return api.StreamConfig{}, InvalidConfig("duplicates window can not be negative")
	case cfg.MaxAge != 0 && cfg.Duplicates > cfg.MaxAge:
		return api.StreamConfig{}, InvalidConfig("duplicates window can not be larger than max age")
	case cfg.Duplicates < minWindow:
		return api.StreamConfig{}, InvalidConfig("duplicates window needs to be >= 100ms")
	}

	if cfg.DenyPurge && cfg.AllowRollup {
		return api.StreamConfig{}, InvalidConfig("roll-ups require the purge permission")
	}
	if cfg.AllowMsgCounter {
		switch {
		case cfg.Discard == api.DiscardNew:
			return api.StreamConfig{}, InvalidConfig("counter stream cannot use discard new")
		case cfg.AllowMsgTTL:
			return api.StreamConfig{}, InvalidConfig("counter stream cannot use message TTLs")
		case cfg.Retention != api.LimitsRetention:
			return api.StreamConfig{}, InvalidConfig("counter stream can only use limits retention")
		}
	}
	if cfg.DiscardNewPer {
		if cfg.Discard != api.DiscardNew {
			return api.StreamConfig{}, InvalidConfig("discard new per subject requires discard new policy to be set")
		}
		if cfg.MaxMsgsPer <= 0 {
			return api.StreamConfig{}, InvalidConfig("discard new per subject requires max msgs per subject > 0")
		}
	}
	if aerr := NormalizeMarkers(&cfg); aerr != nil { // stream_markers_config.go
		return api.StreamConfig{}, aerr
	}
	if aerr := NormalizeSchedules(&cfg); aerr != nil { // schedules.go
		return api.StreamConfig{}, aerr
	}
	if aerr := checkPersistMode(&cfg); aerr != nil { // persist.go
		return api.StreamConfig{}, aerr
	}
	if aerr := checkAtomicConfig(&cfg); aerr != nil {
		return api.StreamConfig{}, aerr
	}

	if len(cfg.Subjects) == 0 && !RawPresent(cfg.Mirror) && !RawPresent(cfg.Sources) {
		cfg.Subjects = []string{cfg.Name}
	}
	if aerr := checkSubjects(&cfg); aerr != nil {
		return api.StreamConfig{}, aerr
	}
	if aerr := CheckTransforms(&cfg); aerr != nil {
		return api.StreamConfig{}, aerr
	}
	setStaticMetadata(&cfg)
	return cfg, nil
}

// Replicas refuses a replica count above one as nats-server does when
// it is not clustered: after the config checks, for streams (create and
// update) and for consumers.
func Replicas(n int) *api.ApiError {
	if n > 1 {
		return api.NewError(api.ErrReplicasNotSupported)
	}
	return nil
}

// rejectUnsupported refuses the features jetwal does not implement, naming
// each one, rather than storing a config it would not honour.
func rejectUnsupported(cfg *api.StreamConfig) *api.ApiError {
	if aerr := CheckSources(cfg, ""); aerr != nil {
		return aerr
	}
	// Normalise empty raw values so configs compare equal.
	if !RawPresent(cfg.Mirror) {
		cfg.Mirror = nil
	}
	if !RawPresent(cfg.Sources) {
		cfg.Sources = nil
	}
	return nil
}

// checkSubjects validates the subjects of one stream on their own; overlap
// with other streams is the manager's check.
func checkSubjects(cfg *api.StreamConfig) *api.ApiError {
	seen := make(map[string]bool, len(cfg.Subjects))
	for _, s := range cfg.Subjects {
		if !subject.ValidFilter(s) {
			return InvalidConfig("invalid subject %q", s)
		}
		if seen[s] {
			return InvalidConfig("duplicate subjects detected")
		}
		seen[s] = true
	}
	var others subject.Set // the subjects before s, to check overlaps in one walk each
	for _, s := range cfg.Subjects {
		if !cfg.NoAck {
			if s == ">" {
				return InvalidConfig("capturing all subjects requires no-ack to be true")
			}
			for _, ns := range reservedNamespaces {
				if subject.Overlap(s, ns.filter) && (ns.allowed == "" || !subject.SubsetOf(s, ns.allowed)) {
					return InvalidConfig("subject %q overlaps with the reserved namespace %s and requires no-ack to be true", s, ns.filter)
				}
			}
		}
		if t, ok := others.Overlapping(s); ok {
			return InvalidConfig("subject %q overlaps with %q", t, s)
		}
		others.Add(s, s)
	}
	return nil
}

// setStaticMetadata stores the API level the config requires, dropping the
// response-only keys, as nats-server keeps it in meta.inf.
func setStaticMetadata(cfg *api.StreamConfig) {
	if cfg.Metadata == nil {
		cfg.Metadata = make(map[string]string, 1)
	}
	delete(cfg.Metadata, api.MetaServerLevel)
	delete(cfg.Metadata, api.MetaServerVersion)
	level := 0
	if cfg.AllowMsgTTL || cfg.SubjectDeleteMarkerTTL > 0 {
		level = 1
	}
	if cfg.AllowMsgCounter || cfg.AllowAtomicPublish || cfg.AllowMsgSchedules || cfg.PersistMode == api.AsyncPersist {
		level = 2
	}
	if cfg.AllowBatchPublish {
		level = 4
	}
	cfg.Metadata[api.MetaRequiredLevel] = strconv.Itoa(level)
}

// WithDynamicMetadata returns a copy of cfg with the server's API level and
// version added, the form create, update and info responses carry.
func WithDynamicMetadata(cfg api.StreamConfig, version string) api.StreamConfig {
	md := make(map[string]string, len(cfg.Metadata)+2)
	for k, v := range cfg.Metadata {
		md[k] = v
	}
	md[api.MetaServerLevel] = strconv.Itoa(api.Level)
	md[api.MetaServerVersion] = version
	cfg.Metadata = md
	return cfg
}

// StreamUpdate validates changing old into upd (both normalized) and returns
// the config to apply.
func StreamUpdate(old, upd *api.StreamConfig) (api.StreamConfig, *api.ApiError) {
	cfg := upd.Clone()
	switch {
	case cfg.Name != old.Name:
		return cfg, InvalidConfig("stream configuration name must match original")
	case RawPresent(cfg.Mirror) && !bytes.Equal(bytes.TrimSpace(cfg.Mirror), bytes.TrimSpace(old.Mirror)):
		// Removing the mirror is allowed (nats-server 2.12+): it promotes
		// the mirror to an ordinary stream. Adding or changing one is not.
		return cfg, api.NewError(api.ErrStreamMirrorNotUpdatable)
	case cfg.Storage != old.Storage:
		return cfg, InvalidConfig("stream configuration update can not change storage type")
	case cfg.Retention != old.Retention &&
		(old.Retention == api.WorkQueueRetention || cfg.Retention == api.WorkQueueRetention):
		return cfg, InvalidConfig("stream configuration update can not change retention policy to/from workqueue")
	case old.Sealed && !cfg.Sealed:
		return cfg, InvalidConfig("stream configuration update can not unseal a sealed stream")
	case old.DenyDelete && !cfg.DenyDelete:
		return cfg, InvalidConfig("stream configuration update can not cancel deny message deletes")
	case old.DenyPurge && !cfg.DenyPurge:
		return cfg, InvalidConfig("stream configuration update can not cancel deny purge")
	case cfg.FirstSeq != old.FirstSeq && cfg.FirstSeq != 0:
		return cfg, InvalidConfig("stream configuration update can not change first sequence")
	case old.AllowMsgTTL && !upd.AllowMsgTTL:
		return cfg, InvalidConfig("message TTL status can not be disabled")
	case old.AllowMsgCounter != upd.AllowMsgCounter:
		return cfg, InvalidConfig("stream configuration update can not change message counter setting")
	case old.PersistMode != upd.PersistMode:
		return cfg, InvalidConfig("stream configuration update can not change persist mode")
	}
	if aerr := scheduleUpdate(old, upd); aerr != nil { // schedules.go
		return cfg, aerr
	}
	cfg.FirstSeq = old.FirstSeq
	if cfg.Sealed {
		cfg.MaxAge = 0
		cfg.Discard = api.DiscardNew
		cfg.DenyDelete, cfg.DenyPurge = true, true
		cfg.AllowRollup = false
	}
	return cfg, nil
}

// SameStream reports whether two normalized configs are equal, ignoring the
// metadata keys the server manages.
func SameStream(a, b *api.StreamConfig) bool {
	x, y := stripServerMetadata(*a), stripServerMetadata(*b)
	xb, err1 := json.Marshal(&x)
	yb, err2 := json.Marshal(&y)
	return err1 == nil && err2 == nil && string(xb) == string(yb)
}

func stripServerMetadata(c api.StreamConfig) api.StreamConfig {
	md := make(map[string]string, len(c.Metadata))
	for k, v := range c.Metadata {
		if !strings.HasPrefix(k, api.MetaReservedPrefix) {
			md[k] = v
		}
	}
	c.Metadata = md
	return c
}

// Describe formats a config for log lines.
func Describe(cfg *api.StreamConfig) string {
	return fmt.Sprintf("%s subjects=%v storage=%s retention=%s", cfg.Name, cfg.Subjects, cfg.Storage, cfg.Retention)
}
