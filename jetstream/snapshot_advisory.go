package jetstream

import (
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// The advisories of snapshots and restores, as nats-server sends them.

func (js *JetStream) adviseSnapshotCreate(stream string, state api.StreamState, client uint64) {
	if subj := api.SubjAdvisorySnapshotCreate + stream; js.listening(subj) {
		js.publishEvent(subj, api.SnapshotCreateAdvisory{TypedEvent: newEvent(api.TypeAdvisorySnapshotCreate),
			Stream: stream, State: state, Client: js.clientInfo(client)})
	}
}

func (js *JetStream) adviseSnapshotComplete(stream string, start time.Time, client uint64, err error) {
	subj := api.SubjAdvisorySnapshotComplete + stream
	if !js.listening(subj) {
		return
	}
	ev := api.SnapshotCompleteAdvisory{TypedEvent: newEvent(api.TypeAdvisorySnapshotComplete),
		Stream: stream, Start: start.UTC(), End: time.Now().UTC(), Client: js.clientInfo(client)}
	if err != nil {
		ev.Error = err.Error()
	}
	js.publishEvent(subj, ev)
}

func (js *JetStream) adviseRestoreCreate(stream string, client uint64) {
	if subj := api.SubjAdvisoryRestoreCreate + stream; js.listening(subj) {
		js.publishEvent(subj, api.RestoreCreateAdvisory{TypedEvent: newEvent(api.TypeAdvisoryRestoreCreate),
			Stream: stream, Client: js.clientInfo(client)})
	}
}

func (js *JetStream) adviseRestoreComplete(stream string, start time.Time, bytes int64, client uint64) {
	if subj := api.SubjAdvisoryRestoreComplete + stream; js.listening(subj) {
		js.publishEvent(subj, api.RestoreCompleteAdvisory{TypedEvent: newEvent(api.TypeAdvisoryRestoreComplete),
			Stream: stream, Start: start.UTC(), End: time.Now().UTC(), Bytes: bytes, Client: js.clientInfo(client)})
	}
}
