package api

import "time"

// Stream snapshot and restore: $JS.API.STREAM.SNAPSHOT.<stream> and
// $JS.API.STREAM.RESTORE.<stream>, with nats-server's field names. The
// archive the chunks carry is jetwal's own format (jetstream/snapshot_*.go).

// Response types of the snapshot and restore requests. The final reply of a
// restore, after the last chunk, is a TypeStreamCreate response.
const (
	TypeStreamSnapshot = "io.nats.jetstream.api.v1.stream_snapshot_response"
	TypeStreamRestore  = "io.nats.jetstream.api.v1.stream_restore_response"
)

// Subjects of the chunk transfers: the flow-control acks of a snapshot
// ($JS.SNAPSHOT.ACK.<stream>.<id>.<size>.<index>) and the subject a restore
// takes its chunks on ($JS.SNAPSHOT.RESTORE.<stream>.<id>).
const (
	SnapshotAckPrefix     = "$JS.SNAPSHOT.ACK."
	SnapshotRestorePrefix = "$JS.SNAPSHOT.RESTORE."
)

// Error numbers of snapshot and restore (nats-server's errors.json).
const (
	ErrSnapshotDeliverSubjectInvalid ErrCode = 10015
	ErrStreamRestore                 ErrCode = 10062
	ErrStreamSnapshot                ErrCode = 10064
	ErrStreamNameExistRestoreFailed  ErrCode = 10130
)

// snapshotErrors are this file's part of errTable.
var snapshotErrors = map[ErrCode]errInfo{
	ErrSnapshotDeliverSubjectInvalid: {400, "deliver subject not valid"},
	ErrStreamRestore:                 {500, "restore failed"},
	ErrStreamSnapshot:                {500, "snapshot failed"},
	ErrStreamNameExistRestoreFailed:  {400, "stream name already in use, cannot restore"},
}

// StreamSnapshotRequest is the body of STREAM.SNAPSHOT.
type StreamSnapshotRequest struct {
	// DeliverSubject receives the archive's chunks.
	DeliverSubject string `json:"deliver_subject"`
	// NoConsumers leaves the consumers out of the archive.
	NoConsumers bool `json:"no_consumers,omitempty"`
	// ChunkSize is the preferred chunk size, clamped to 1KiB..1MiB
	// (default 128KiB).
	ChunkSize int `json:"chunk_size,omitempty"`
	// WindowSize is how many bytes may be unacknowledged, clamped to
	// 1KiB..32MiB (default 8MiB) and at least one chunk.
	WindowSize int `json:"window_size,omitempty"`
	// CheckMsgs verifies the stored messages before the snapshot.
	CheckMsgs bool `json:"jsck,omitempty"`
}

// StreamSnapshotResponse answers STREAM.SNAPSHOT before the chunks flow.
type StreamSnapshotResponse struct {
	Response
	Config *StreamConfig `json:"config,omitempty"`
	State  *StreamState  `json:"state,omitempty"`
}

// StreamRestoreRequest is the body of STREAM.RESTORE: what a backup's
// backup.json holds.
type StreamRestoreRequest struct {
	Config StreamConfig `json:"config"`
	State  StreamState  `json:"state"`
}

// StreamRestoreResponse answers STREAM.RESTORE with where to send chunks.
type StreamRestoreResponse struct {
	Response
	DeliverSubject string `json:"deliver_subject"`
}

// Advisory subjects (a stream name follows) and schema types of snapshots
// and restores.
const (
	SubjAdvisorySnapshotCreate   = "$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_CREATE."
	SubjAdvisorySnapshotComplete = "$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_COMPLETE."
	SubjAdvisoryRestoreCreate    = "$JS.EVENT.ADVISORY.STREAM.RESTORE_CREATE."
	SubjAdvisoryRestoreComplete  = "$JS.EVENT.ADVISORY.STREAM.RESTORE_COMPLETE."

	TypeAdvisorySnapshotCreate   = "io.nats.jetstream.advisory.v1.snapshot_create"
	TypeAdvisorySnapshotComplete = "io.nats.jetstream.advisory.v1.snapshot_complete"
	TypeAdvisoryRestoreCreate    = "io.nats.jetstream.advisory.v1.restore_create"
	TypeAdvisoryRestoreComplete  = "io.nats.jetstream.advisory.v1.restore_complete"
)

// SnapshotCreateAdvisory: a snapshot started.
type SnapshotCreateAdvisory struct {
	TypedEvent
	Stream string      `json:"stream"`
	State  StreamState `json:"state"`
	Client *ClientInfo `json:"client"`
}

// SnapshotCompleteAdvisory: a snapshot ended; Error says why it failed.
type SnapshotCompleteAdvisory struct {
	TypedEvent
	Stream string      `json:"stream"`
	Start  time.Time   `json:"start"`
	End    time.Time   `json:"end"`
	Client *ClientInfo `json:"client"`
	Error  string      `json:"error,omitempty"`
}

// RestoreCreateAdvisory: a restore started.
type RestoreCreateAdvisory struct {
	TypedEvent
	Stream string      `json:"stream"`
	Client *ClientInfo `json:"client"`
}

// RestoreCompleteAdvisory: a restore ended, after Bytes of archive.
type RestoreCompleteAdvisory struct {
	TypedEvent
	Stream string      `json:"stream"`
	Start  time.Time   `json:"start"`
	End    time.Time   `json:"end"`
	Bytes  int64       `json:"bytes"`
	Client *ClientInfo `json:"client"`
}
