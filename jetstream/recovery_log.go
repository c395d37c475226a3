package jetstream

import (
	"github.com/jetwal/jetwal/wal"
)

// logRecovery reports what opening a stream's store found: a torn tail cut
// off, and every damaged record with its file and byte offset. Damage in
// segments a checkpoint covered is not scanned at open; a background
// Verify of the sealed segments finds it, marks the messages lost (a get
// answers "message not found", never garbage) and logs it the same way.
func (js *JetStream) logRecovery(name string, st *wal.Store) {
	rep := st.Recovery()
	if rep.TornTail != nil {
		js.log.Warn("stream store: torn tail cut off (an unsynced write interrupted by a crash)",
			"stream", name, "file", rep.TornTail.File, "offset", rep.TornTail.Offset, "truncated_from", rep.TruncatedFrom)
	}
	for _, c := range rep.Corrupt {
		js.log.Error("stream store: damaged record", "stream", name, "file", c.File, "offset", c.Offset, "reason", c.Reason)
	}
	if lost := st.State().Lost; lost != nil && len(lost.Msgs) > 0 {
		js.log.Error("stream store: messages lost to damage", "stream", name, "count", len(lost.Msgs), "first", lost.Msgs[0])
	}
	go func() {
		for _, c := range st.Verify() {
			js.log.Error("stream store: damaged record", "stream", name, "file", c.File, "offset", c.Offset, "reason", c.Reason)
		}
	}()
}
