package api

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

func init() {
	errTable[ErrSnapshotDeliverSubjectInvalid] = errInfo{400, "deliver subject not valid"}
	errTable[ErrStreamRestore] = errInfo{500, "restore failed"}
	errTable[ErrStreamSnapshot] = errInfo{500, "snapshot failed"}
	errTable[ErrStreamNameExistRestoreFailed] = errInfo{400, "stream name already in use, cannot restore"}
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
