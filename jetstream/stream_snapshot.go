package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/internal/archive"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// A stream's side of STREAM.SNAPSHOT (api_snapshot.go sends it): the
// point-in-time capture and the archive written from it.

// checkMsgs verifies every checksum of a file stream's segments, for a
// snapshot request with check_msgs.
func (s *stream) checkMsgs() *api.ApiError {
	if w, ok := s.store.(*wal.Store); ok {
		if bad := w.Verify(); len(bad) > 0 {
			return api.Errorf(api.ErrStreamSnapshot, "snapshot failed: %d damaged segments, first: %v", len(bad), bad[0])
		}
	}
	return nil
}

// streamSnap is a stream captured at one point in time: its header, state
// and consumers. The messages are read from the store up to hdr.LastSeq.
type streamSnap struct {
	hdr   archive.Header
	state store.State
	cons  []archive.Consumer
}

// capture takes the point in time under the publish lock: consumers first,
// so their positions never pass the captured last sequence.
func (s *stream) capture(withConsumers bool) *streamSnap {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := &streamSnap{}
	if withConsumers {
		for _, c := range s.cons.all() {
			if ac, ok := c.archive(); ok {
				snap.cons = append(snap.cons, ac)
			}
		}
	}
	snap.state = s.store.State()
	snap.hdr = archive.Header{
		Format:   archive.Format,
		Created:  s.created,
		Config:   s.config(),
		FirstSeq: snap.state.FirstSeq,
		LastSeq:  snap.state.LastSeq,
		Msgs:     snap.state.Msgs,
	}
	return snap
}

// archive returns a persisted consumer's meta and state; ephemeral
// consumers (state in memory, no durable name) are not archived.
func (c *consumer) archive() (archive.Consumer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || (c.cs == nil && c.cfg.Durable == "") {
		return archive.Consumer{}, false
	}
	var st consumerstate.State
	if c.cs != nil {
		st = c.cs.Snapshot()
	} else {
		st = c.mem
	}
	meta, err := json.Marshal(consumerMeta{Created: c.created, Config: c.cfg, LastPerSubject: c.lpsAll})
	if err != nil {
		return archive.Consumer{}, false
	}
	return archive.Consumer{Name: c.name, Meta: meta, State: consumerstate.Encode(&st)}, true
}

// writeArchive writes the snapshot's archive to w.
func (s *stream) writeArchive(snap *streamSnap, w io.Writer) error {
	a := archive.NewWriter(w)
	if err := a.Header(&snap.hdr); err != nil {
		return err
	}
	var m store.Msg
	for seq := snap.hdr.FirstSeq; seq != 0 && seq <= snap.hdr.LastSeq; seq = m.Seq + 1 {
		err := s.store.LoadNext("", seq, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading stream %s at seq %d: %w", s.name, seq, err)
		}
		if m.Seq > snap.hdr.LastSeq {
			break
		}
		if err := a.Msg(&m); err != nil {
			return err
		}
	}
	for i := range snap.cons {
		if err := a.Consumer(&snap.cons[i]); err != nil {
			return err
		}
	}
	return a.Close()
}
