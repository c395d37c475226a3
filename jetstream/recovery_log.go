package jetstream

import (
	"github.com/jetwal/jetwal/consumerstate"
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
	for _, f := range rep.Repaired {
		js.log.Warn("stream store: damaged segment header rewritten from the file name, its records kept", "stream", name, "file", f)
	}
	for _, f := range rep.SetAside {
		js.log.Error("stream store: damaged segment file set aside, the rest of the stream loaded", "stream", name, "file", f)
	}
	for _, c := range rep.Corrupt {
		js.log.Error("stream store: damaged record", "stream", name, "file", c.File, "offset", c.Offset, "reason", c.Reason)
	}
	if lost := st.State().Lost; lost != nil && len(lost.Msgs) > 0 {
		js.log.Error("stream store: messages lost to damage", "stream", name, "count", len(lost.Msgs), "first", lost.Msgs[0])
	}
	// Streams loaded at start count toward Verified; a stream created
	// later starts empty and has nothing to verify.
	tracked := js.loading
	if tracked {
		js.verifying.Add(1)
	}
	go func() {
		if tracked {
			defer js.verifying.Done()
		}
		for _, c := range st.Verify() {
			js.log.Error("stream store: damaged record", "stream", name, "file", c.File, "offset", c.Offset, "reason", c.Reason)
		}
	}()
}

// Verified is closed once the background verification of the streams
// loaded at start (every record of every segment, checked against its
// checksum) has finished: damage a checkpoint spared recovery from reading
// is reported by then. Close stops it early.
func (js *JetStream) Verified() <-chan struct{} { return js.verified }

// logConsumerRecovery reports what opening a consumer's state found: a torn
// log tail cut off (its last changes, never confirmed, are gone) and damage
// salvaged around (the changes in the damaged stretch are lost). Neither is
// silent: the consumer's position may have moved back.
func (js *JetStream) logConsumerRecovery(stream, name string, rep consumerstate.Recovery) {
	if rep.TornBytes > 0 {
		js.log.Warn("consumer state: torn log tail cut off (an unsynced write interrupted by a crash)",
			"stream", stream, "consumer", name, "file", rep.LogFile, "offset", rep.TornOffset, "bytes", rep.TornBytes)
	}
	for _, d := range rep.Damaged {
		js.log.Error("consumer state: damaged log record; its changes are lost, later records were kept",
			"stream", stream, "consumer", name, "file", d.File, "offset", d.Offset, "bytes", d.Bytes, "skipped_ops", rep.SkippedOps)
	}
}
