package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/internal/archive"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// Restoring a stream into a cluster (nats stream restore). The meta
// leader answers STREAM.RESTORE and reads the archive as a single server
// does (api_restore.go, snapshot_restore.go: into a hidden local store).
// With the whole archive read, it assigns the stream through the meta
// group (the archive's config, its replicas placed as a create places
// them) and, once the stream's group has a leader, hands that leader the
// messages in order, in batches on writeSubject (the internal account,
// like every request between servers): the leader appends each through
// raft with its original time and sequence (a gap is a skip), so every
// replica holds the same messages at the same sequences. A batch resent
// after a leader change is applied only past the stream's last sequence.
// Then the local copy is removed and the client gets the stream's info.
//
// The archive's durable consumers are then assigned with their states as
// checkpoints. Not as nats-server: the stream exists, and takes publishes,
// while its messages are being handed over; ephemeral consumers are not
// restored; the dedupe window starts empty.

const (
	writeSubject = "WRITE"
	writeWait    = 10 * time.Second // one batch through raft, on a loaded machine
	leaderWait   = 20 * time.Second // the restored stream's group electing a leader
)

// writeRequest carries messages for Stream's leader to append at their
// sequences; SkipTo, when past the last, makes it the next sequence after
// them (deleted messages at the archive's end).
type writeRequest struct {
	Stream string      `json:"stream"`
	Msgs   []store.Msg `json:"msgs,omitempty"`
	SkipTo uint64      `json:"skip_to,omitempty"`
}

type writeAnswer struct {
	Last uint64 `json:"last"`
	Err  string `json:"err,omitempty"`
}

// rawWriter is a replicated stream's store as a restore writes it.
type rawWriter interface {
	SkipTo(next uint64) error
	AppendAt(subject string, hdr, data []byte, ts int64) (uint64, int64, error)
}

func (js *JetStream) serveWrites() error {
	stop, err := js.cl.c.Answer(writeSubject, js.answerWrite)
	if err != nil {
		return err
	}
	js.cl.mu.Lock()
	js.cl.stopWrites = stop
	js.cl.mu.Unlock()
	return nil
}

func (js *JetStream) answerWrite(_ string, data []byte) []byte {
	var req writeRequest
	if json.Unmarshal(data, &req) != nil {
		return nil
	}
	s := js.lookup(req.Stream)
	if s == nil || s.rep == nil || !s.rep.IsLeader() {
		return nil
	}
	ans := writeAnswer{}
	if err := s.writeRestored(req.Msgs, req.SkipTo); err != nil {
		ans.Err = err.Error()
	}
	s.mu.Lock()
	ans.Last = s.lastSeq
	s.mu.Unlock()
	b, _ := json.Marshal(ans)
	return b
}

// writeRestored appends restored messages past the stream's last sequence
// at their own sequences, then skips to skipTo.
func (s *stream) writeRestored(msgs []store.Msg, skipTo uint64) error {
	w, ok := s.store.(rawWriter)
	if !ok {
		return errors.New("this stream's store cannot take restored messages")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range msgs {
		m := &msgs[i]
		if m.Seq <= s.lastSeq {
			continue // already written (a batch resent)
		}
		if m.Seq > s.lastSeq+1 {
			if err := w.SkipTo(m.Seq); err != nil {
				return err
			}
			s.lastSeq = m.Seq - 1
		}
		seq, _, err := w.AppendAt(m.Subject, m.Header, m.Data, m.Time)
		if err != nil {
			return err
		}
		if seq != m.Seq {
			return fmt.Errorf("restored message %d stored at sequence %d", m.Seq, seq)
		}
		s.lastSeq = seq
	}
	if skipTo > s.lastSeq+1 {
		if err := w.SkipTo(skipTo); err != nil {
			return err
		}
		s.lastSeq = skipTo - 1
	}
	return nil
}

// checkClusterRestoreTarget refuses a restore whose name or subjects are
// taken in the cluster, or that the account's limits refuse.
func (js *JetStream) checkClusterRestoreTarget(cfg *api.StreamConfig) *api.ApiError {
	if _, ok := js.assignment(cfg.Name); ok {
		return api.NewError(api.ErrStreamNameExistRestoreFailed)
	}
	for _, a := range js.assignments() {
		for _, subj := range cfg.Subjects {
			for _, other := range a.Config.Subjects {
				if subject.Overlap(subj, other) {
					return api.NewError(api.ErrStreamSubjectOverlap)
				}
			}
		}
	}
	return js.checkClusterStreamLimits("", cfg)
}

// installCluster completes a restore into the cluster (see above) and
// returns the stream's info. The local copy is removed in every case.
func (js *JetStream) installCluster(b *restoreBuilder) (*api.StreamInfo, error) {
	defer b.abort()
	if b.st == nil {
		return nil, errors.New("restore failed: the archive has no header")
	}
	b.wg.Wait()
	if err := b.failed(); err != nil {
		return nil, err
	}
	cfg := b.cfg
	if aerr := js.checkClusterRestoreTarget(&cfg); aerr != nil {
		return nil, errors.New(aerr.Description)
	}
	if max(cfg.Replicas, 1) == 1 {
		return js.installClusterR1(b)
	}
	peers, aerr := js.placeStream(&cfg, max(cfg.Replicas, 1), nil, nil)
	if aerr != nil {
		return nil, errors.New(aerr.Description)
	}
	created := b.hdr.Created
	if created.IsZero() {
		created = time.Now()
	}
	a := streamAssignment{Config: cfg, Created: created.UTC(), Peers: peers}
	if err := js.propose(streamKeyPrefix+cfg.Name, a); err != nil {
		return nil, err
	}
	var batch []store.Msg
	size := 0
	send := func(skipTo uint64) error {
		err := js.writeToLeader(cfg.Name, writeRequest{Stream: cfg.Name, Msgs: batch, SkipTo: skipTo})
		batch, size = batch[:0], 0
		return err
	}
	var m store.Msg
	for next := uint64(1); ; {
		err := b.st.LoadNext("", next, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the restored messages at %d: %w", next, err)
		}
		batch = append(batch, store.Msg{Seq: m.Seq, Time: m.Time, Subject: m.Subject,
			Header: append([]byte(nil), m.Header...), Data: append([]byte(nil), m.Data...)})
		size += len(m.Subject) + len(m.Header) + len(m.Data)
		if len(batch) >= readMax || size >= readBytes {
			if err := send(0); err != nil {
				return nil, err
			}
		}
		next = m.Seq + 1
	}
	skipTo := uint64(0)
	if b.hdr.LastSeq > 0 {
		skipTo = b.hdr.LastSeq + 1
	}
	if err := send(skipTo); err != nil {
		return nil, err
	}
	js.restoreClusterConsumers(cfg.Name, b.cons)
	infos := js.leaderInfos([]streamAssignment{a})
	return js.listedInfo(a, infos), nil
}

// restoreClusterConsumers assigns the archive's durable consumers to the
// restored stream, each with its state as the checkpoint its leader starts
// it from (cluster_consumer.go); an ephemeral one is left out, as an
// ephemeral consumer of a replicated stream lives only on its leader.
func (js *JetStream) restoreClusterConsumers(stream string, cons []archive.Consumer) {
	for i := range cons {
		c := &cons[i]
		var meta consumerMeta
		if err := json.Unmarshal(c.Meta, &meta); err != nil {
			js.log.Warn("restore: consumer not restored", "stream", stream, "consumer", c.Name, "error", err)
			continue
		}
		if meta.Config.Durable == "" {
			js.log.Warn("restore: ephemeral consumer not restored in a cluster", "stream", stream, "consumer", c.Name)
			continue
		}
		if _, err := consumerstate.Decode(c.State); err != nil {
			js.log.Warn("restore: consumer not restored", "stream", stream, "consumer", c.Name, "error", err)
			continue
		}
		err := js.cl.c.Put(cstateKey(stream, meta.Config.Durable), c.State)
		if err == nil {
			err = js.propose(consumerKeyPrefix+stream+"/"+meta.Config.Durable, consumerAssignment{Config: meta.Config, Created: meta.Created})
		}
		if err != nil {
			js.log.Warn("restore: consumer not restored", "stream", stream, "consumer", c.Name, "error", err)
		}
	}
}

// installClusterR1 restores an R1 stream on this server, as a single
// server does, and then assigns it here through the meta group.
func (js *JetStream) installClusterR1(b *restoreBuilder) (*api.StreamInfo, error) {
	s, err := b.install()
	if err != nil {
		return nil, err
	}
	cfg := s.config()
	a := streamAssignment{Config: cfg, Created: s.created.UTC(), Peers: []string{js.cl.c.Self()}}
	if err := js.propose(streamKeyPrefix+cfg.Name, a); err != nil {
		if aerr := js.deleteStream(cfg.Name); aerr != nil {
			js.log.Error("restore: removing the unassigned stream", "stream", cfg.Name, "error", aerr.Description)
		}
		return nil, err
	}
	return js.servedInfo(cfg.Name), nil
}

// writeToLeader hands one batch to the stream's leader, waiting for the
// group to elect one and retrying across a leader change.
func (js *JetStream) writeToLeader(name string, req writeRequest) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(leaderWait)
	for {
		var ans *writeAnswer
		err := js.cl.c.Gather(writeSubject, body, writeWait, func(b []byte) bool {
			var a writeAnswer
			if json.Unmarshal(b, &a) != nil {
				return false
			}
			ans = &a
			return true
		})
		switch {
		case err != nil:
			return err
		case ans != nil && ans.Err == "":
			return nil
		case time.Now().After(deadline):
			if ans != nil {
				return fmt.Errorf("restore failed: writing to stream %s: %s", name, ans.Err)
			}
			return fmt.Errorf("restore failed: stream %s has no leader after %v", name, leaderWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
