package jetstream

import (
	"slices"
	"time"
)

// Replica data this server keeps of streams it no longer holds: a server
// that was down while its replica was taken away (fewer replicas, a peer
// moved or removed, the stream deleted) never left the group. Once its
// copy of the meta map is current (a read barrier through the meta
// leader), it deletes the data of every stream whose assignment does not
// name it (package cluster refuses while a replica is open or opening).

// sweepStaleReplicas runs once the meta group has started, in the
// background, until it has swept or JetStream closes.
func (js *JetStream) sweepStaleReplicas() {
	for {
		if err := js.cl.c.SyncMeta(); err == nil {
			break
		}
		select {
		case <-js.stopSweep:
			return
		case <-time.After(time.Second):
		}
	}
	names, err := js.cl.c.StreamDirs()
	if err != nil {
		js.log.Warn("cluster: listing replica data", "error", err)
		return
	}
	for _, name := range names {
		if a, ok := js.assignment(name); ok && slices.Contains(a.Peers, js.cl.c.Self()) && (a.grouped() || a.Convert != nil) || js.hostedStream(name) != nil {
			continue
		}
		if err := js.cl.c.RemoveStreamData(name); err != nil {
			js.log.Warn("cluster: removing replica data of a stream this server no longer holds", "stream", name, "error", err)
			continue
		}
		js.log.Info("cluster: removed replica data of a stream this server no longer holds", "stream", name)
	}
}
