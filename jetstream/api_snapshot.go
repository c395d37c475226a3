package jetstream

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nuid"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/subject"
)

// Snapshot transfer limits, as nats-server applies them.
const (
	snapDefaultChunk  = 128 << 10
	snapDefaultWindow = 8 << 20
	snapMinChunk      = 1 << 10
	snapMaxChunk      = 1 << 20
	snapMaxWindow     = 32 << 20
)

// snapInterestWait is how long a snapshot waits for a subscriber on its
// deliver subject before it starts.
const snapInterestWait = 2 * time.Second

// snapChunkSizes clamps the requested chunk and window sizes and returns
// the chunk size and how many chunks may be unacknowledged. As in
// nats-server, only 0 means the default; a negative size is clamped to the
// minimum.
func snapChunkSizes(chunk, window int) (size, inflight int) {
	if chunk == 0 {
		chunk = snapDefaultChunk
	}
	if window == 0 {
		window = snapDefaultWindow
	}
	chunk = min(max(chunk, snapMinChunk), snapMaxChunk)
	window = min(max(window, snapMinChunk), snapMaxWindow)
	window = max(window, chunk)
	return chunk, window / chunk
}

// SnapshotStream captures the stream name for STREAM.SNAPSHOT
// (apiserver.SnapshotOps): the reply carries the stream's config and state
// at the snapshot's point in time, then start sends the archive in chunks
// to the deliver subject.
func (js *JetStream) SnapshotStream(name string, req api.StreamSnapshotRequest, bodyErr *api.ApiError, client uint64) (*api.StreamConfig, *api.StreamState, func(), *api.ApiError) {
	s := js.lookup(name)
	if s == nil {
		return nil, nil, nil, api.NewError(api.ErrStreamNotFound)
	}
	if bodyErr != nil {
		return nil, nil, nil, bodyErr
	}
	if !subject.ValidLiteral(req.DeliverSubject) {
		return nil, nil, nil, api.NewError(api.ErrSnapshotDeliverSubjectInvalid)
	}
	if req.CheckMsgs {
		if aerr := s.checkMsgs(); aerr != nil {
			return nil, nil, nil, aerr
		}
	}
	snap := s.capture(!req.NoConsumers)
	cfg := snap.hdr.Config
	state := apiState(&snap.state, s.consumerCount())
	start := func() {
		js.log.Info("snapshot started", "stream", s.name, "first_seq", snap.hdr.FirstSeq, "last_seq", snap.hdr.LastSeq)
		js.adviseSnapshotCreate(s.name, state, client)
		go func() {
			start := time.Now()
			err := js.sendSnapshot(s, snap, &req)
			js.adviseSnapshotComplete(s.name, start, client, err)
			if err != nil {
				js.log.Warn("snapshot failed", "stream", s.name, "error", err)
				return
			}
			js.log.Info("snapshot sent", "stream", s.name)
		}()
	}
	return &cfg, &state, start, nil
}

// sendSnapshot streams the archive to the deliver subject in chunks, each
// with an ack subject the receiver answers; at most the window's chunks are
// unacknowledged. The last message is empty: a "204" status header when
// all went out, or an error status.
func (js *JetStream) sendSnapshot(s *stream, snap *streamSnap, req *api.StreamSnapshotRequest) error {
	chunkSize, inflight := snapChunkSizes(req.ChunkSize, req.WindowSize)
	// The nats tools subscribe to the deliver subject only once they have
	// the response: wait a little for that interest, as nats-server does.
	for deadline := time.Now().Add(snapInterestWait); !js.srv.HasLiteralInterest(req.DeliverSubject) && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.writeArchive(snap, pw)) }()
	defer pr.Close()

	slots := make(chan struct{}, inflight)
	for range inflight {
		slots <- struct{}{}
	}
	ackSubj := api.SnapshotAckPrefix + s.name + "." + nuid.Next()
	sub, err := js.srv.Subscribe(ackSubj+".>", "", func(*server.Msg) {
		select {
		case slots <- struct{}{}:
		default:
		}
	})
	if err != nil {
		js.srv.Publish(req.DeliverSubject, "", snapStatus("500", err.Error()), nil)
		return fmt.Errorf("subscribe %s: %w", ackSubj, err)
	}
	defer sub.Unsubscribe()

	var status []byte
	var result error
	timer := time.NewTimer(js.cfg.waits.snapAck)
	defer timer.Stop()
	chunk := make([]byte, chunkSize)
	for index := 1; ; index++ {
		select {
		case <-slots:
		case <-timer.C:
			status, result = snapStatus("408", "No Flow Response"), errors.New("no flow-control ack from the receiver")
		}
		if result == nil && !js.srv.HasLiteralInterest(req.DeliverSubject) {
			status, result = snapStatus("408", "No Interest"), errors.New("no interest in the deliver subject")
		}
		if result != nil {
			break
		}
		n, err := io.ReadFull(pr, chunk)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if n > 0 {
				js.srv.Publish(req.DeliverSubject, "", nil, chunk[:n])
			}
			status = snapStatus("204", "")
			break
		}
		if err != nil {
			status, result = snapStatus("500", "snapshot failed: "+err.Error()), err
			break
		}
		js.srv.Publish(req.DeliverSubject, fmt.Sprintf("%s.%d.%d", ackSubj, n, index), nil, chunk)
		chunk = make([]byte, chunkSize) // the sent one may still be queued
		timer.Reset(js.cfg.waits.snapAck)
	}
	js.srv.Publish(req.DeliverSubject, "", status, nil)
	return result
}

// snapStatus is a status-only header ("NATS/1.0 408 No Flow Response").
func snapStatus(code, desc string) []byte {
	desc = strings.NewReplacer("\r", " ", "\n", " ").Replace(desc)
	if desc != "" {
		desc = " " + desc
	}
	return []byte("NATS/1.0 " + code + desc + "\r\n\r\n")
}
