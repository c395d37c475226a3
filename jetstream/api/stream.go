package api

import (
	"encoding/json"
	"time"
)

// StreamConfig is a stream's configuration as clients send it and as
// nats-server returns it. Field order matches nats-server's JSON.
//
// Fields jetwal accepts but does not implement (mirror, sources) are kept as
// raw JSON so the config check can refuse them with a clear error instead of
// silently dropping them.
type StreamConfig struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	Subjects     []string        `json:"subjects,omitempty"`
	Retention    RetentionPolicy `json:"retention"`
	MaxConsumers int             `json:"max_consumers"`
	MaxMsgs      int64           `json:"max_msgs"`
	MaxBytes     int64           `json:"max_bytes"`
	MaxAge       time.Duration   `json:"max_age"`
	MaxMsgsPer   int64           `json:"max_msgs_per_subject"`
	MaxMsgSize   int32           `json:"max_msg_size,omitempty"`
	Discard      DiscardPolicy   `json:"discard"`
	Storage      StorageType     `json:"storage"`
	Replicas     int             `json:"num_replicas"`
	NoAck        bool            `json:"no_ack,omitempty"`
	Duplicates   time.Duration   `json:"duplicate_window,omitempty"`
	Placement    *Placement      `json:"placement,omitempty"`
	Mirror       json.RawMessage `json:"mirror,omitempty"`
	Sources      json.RawMessage `json:"sources,omitempty"`
	Compression  Compression     `json:"compression"`
	FirstSeq     uint64          `json:"first_seq,omitempty"`

	SubjectTransform *SubjectTransformConfig `json:"subject_transform,omitempty"`
	RePublish        *RePublish              `json:"republish,omitempty"`

	AllowDirect   bool `json:"allow_direct"`
	MirrorDirect  bool `json:"mirror_direct"`
	DiscardNewPer bool `json:"discard_new_per_subject,omitempty"`

	Sealed      bool `json:"sealed"`
	DenyDelete  bool `json:"deny_delete"`
	DenyPurge   bool `json:"deny_purge"`
	AllowRollup bool `json:"allow_rollup_hdrs"`

	ConsumerLimits StreamConsumerLimits `json:"consumer_limits"`

	AllowMsgTTL            bool          `json:"allow_msg_ttl"`
	SubjectDeleteMarkerTTL time.Duration `json:"subject_delete_marker_ttl,omitempty"`
	AllowMsgCounter        bool          `json:"allow_msg_counter,omitempty"`
	AllowAtomicPublish     bool          `json:"allow_atomic,omitempty"`
	AllowMsgSchedules      bool          `json:"allow_msg_schedules,omitempty"`
	PersistMode            PersistMode   `json:"persist_mode,omitempty"`
	AllowBatchPublish      bool          `json:"allow_batched,omitempty"`

	Metadata map[string]string `json:"metadata,omitempty"`
}

// Clone returns a deep copy of c.
func (c *StreamConfig) Clone() StreamConfig {
	n := *c
	n.Subjects = append([]string(nil), c.Subjects...)
	if c.Placement != nil {
		p := *c.Placement
		p.Tags = append([]string(nil), c.Placement.Tags...)
		n.Placement = &p
	}
	n.Mirror = cloneRaw(c.Mirror)
	n.Sources = cloneRaw(c.Sources)
	if c.SubjectTransform != nil {
		t := *c.SubjectTransform
		n.SubjectTransform = &t
	}
	if c.RePublish != nil {
		r := *c.RePublish
		n.RePublish = &r
	}
	if c.Metadata != nil {
		n.Metadata = make(map[string]string, len(c.Metadata))
		for k, v := range c.Metadata {
			n.Metadata[k] = v
		}
	}
	return n
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// SubjectTransformConfig maps the subject of every message the stream
// receives that matches Source to Destination before it is stored.
type SubjectTransformConfig struct {
	Source      string `json:"src"`
	Destination string `json:"dest"`
}

// RePublish publishes every stored message whose subject matches Source to
// the subject Destination maps it to, with the stream's headers added;
// HeadersOnly leaves the payload out.
type RePublish struct {
	Source      string `json:"src,omitempty"`
	Destination string `json:"dest"`
	HeadersOnly bool   `json:"headers_only,omitempty"`
}

// StreamConsumerLimits are defaults applied to the stream's consumers.
type StreamConsumerLimits struct {
	InactiveThreshold time.Duration `json:"inactive_threshold,omitempty"`
	MaxAckPending     int           `json:"max_ack_pending,omitempty"`
}

// Placement names where a clustered server would put the stream. A single
// jetwal server accepts and keeps it without acting on it.
type Placement struct {
	Cluster   string   `json:"cluster,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Preferred string   `json:"preferred,omitempty"`
}

// StreamState is the state block of a stream info.
type StreamState struct {
	Msgs        uint64            `json:"messages"`
	Bytes       uint64            `json:"bytes"`
	FirstSeq    uint64            `json:"first_seq"`
	FirstTime   time.Time         `json:"first_ts"`
	LastSeq     uint64            `json:"last_seq"`
	LastTime    time.Time         `json:"last_ts"`
	NumSubjects int               `json:"num_subjects,omitempty"`
	Subjects    map[string]uint64 `json:"subjects,omitempty"`
	NumDeleted  int               `json:"num_deleted,omitempty"`
	Deleted     []uint64          `json:"deleted,omitempty"`
	Lost        *LostStreamData   `json:"lost,omitempty"`
	Consumers   int               `json:"consumer_count"`
}

// LostStreamData lists messages recovery found damaged.
type LostStreamData struct {
	Msgs  []uint64 `json:"msgs"`
	Bytes uint64   `json:"bytes"`
}

// ClusterInfo is the cluster block of STREAM.INFO; a single server reports
// itself as leader.
type ClusterInfo struct {
	Name        string      `json:"name,omitempty"`
	RaftGroup   string      `json:"raft_group,omitempty"`
	Leader      string      `json:"leader,omitempty"`
	LeaderSince *time.Time  `json:"leader_since,omitempty"`
	Replicas    []*PeerInfo `json:"replicas,omitempty"`
}

// PeerInfo is one follower of a replicated stream or consumer, as its
// leader sees it.
type PeerInfo struct {
	Name    string        `json:"name"`
	Current bool          `json:"current"`
	Offline bool          `json:"offline,omitempty"`
	Active  time.Duration `json:"active"`
	Lag     uint64        `json:"lag,omitempty"`
	Peer    string        `json:"peer"`
}

// StreamInfo describes a stream: config, creation time, state.
type StreamInfo struct {
	Config    StreamConfig        `json:"config"`
	Created   time.Time           `json:"created"`
	State     StreamState         `json:"state"`
	Cluster   *ClusterInfo        `json:"cluster,omitempty"`
	Mirror    *StreamSourceInfo   `json:"mirror,omitempty"`
	Sources   []*StreamSourceInfo `json:"sources,omitempty"`
	TimeStamp time.Time           `json:"ts"`
}
