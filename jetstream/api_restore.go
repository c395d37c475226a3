package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nuid"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/server"
)

// restoreQueue is how many chunks may wait for the restore goroutine; the
// nats tools send one at a time and wait for its ack.
const restoreQueue = 16

// RestoreStream prepares STREAM.RESTORE of a stream of a checked config
// (apiserver.SnapshotOps): it checks the target and subscribes the subject
// the archive's chunks go to; start builds the stream from them. The
// stream appears only once the whole archive was read and stored; until
// then nothing of it is visible, and a failed or abandoned restore leaves
// nothing behind.
func (js *JetStream) RestoreStream(cfg api.StreamConfig, client uint64) (string, func(), *api.ApiError) {
	var aerr *api.ApiError
	if !js.clustered() {
		aerr = validate.Replicas(cfg.Replicas)
	}
	if aerr == nil && cfg.Storage == api.MemoryStorage {
		aerr = api.Errorf(api.ErrStreamRestore, "restore failed: jetwal restores file streams only")
	}
	if aerr == nil && js.clustered() {
		aerr = js.checkClusterRestoreTarget(&cfg) // cluster_restore.go
	} else if aerr == nil {
		aerr = js.checkRestoreTarget(&cfg)
	}
	if aerr != nil {
		return "", nil, aerr
	}
	name := cfg.Name
	rs := &restoreSession{
		js:   js,
		cfg:  cfg,
		subj: api.SnapshotRestorePrefix + name + "." + nuid.Next(),
		in:   make(chan restoreChunk, restoreQueue),

		client: client,
		start:  time.Now(),
	}
	sub, err := js.srv.Subscribe(rs.subj, "", rs.handleChunk)
	if err != nil {
		return "", nil, api.Errorf(api.ErrStreamRestore, "restore failed: subscribe %s: %v", rs.subj, err)
	}
	rs.sub = sub
	start := func() {
		js.log.Info("restore started", "stream", name)
		js.adviseRestoreCreate(name, client)
		go rs.run()
	}
	return rs.subj, start, nil
}

// installRestored installs a fully read archive: here, or in a cluster
// through the meta group and the stream's leader (cluster_restore.go).
func (js *JetStream) installRestored(b *restoreBuilder) (*api.StreamInfo, error) {
	if js.clustered() {
		return js.installCluster(b)
	}
	s, err := b.install()
	if err != nil {
		return nil, err
	}
	return js.streamInfo(s, false), nil
}

// checkRestoreTarget refuses a name in use and subjects or reservations
// that collide with existing streams.
func (js *JetStream) checkRestoreTarget(cfg *api.StreamConfig) *api.ApiError {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.checkRestoreTargetLocked(cfg)
}

// checkRestoreTargetLocked is checkRestoreTarget; caller holds js.mu.
func (js *JetStream) checkRestoreTargetLocked(cfg *api.StreamConfig) *api.ApiError {
	if js.closed {
		return api.Errorf(api.ErrStreamRestore, "restore failed: JetStream is shutting down")
	}
	if js.streams[cfg.Name] != nil {
		return api.NewError(api.ErrStreamNameExistRestoreFailed)
	}
	if other := js.overlapping(cfg.Name, cfg.Subjects); other != "" {
		return api.NewError(api.ErrStreamSubjectOverlap)
	}
	return js.checkResources(cfg.Name, cfg)
}

// restoreChunk is one message on the restore subject.
type restoreChunk struct {
	data  []byte
	reply string
}

// restoreSession is one restore in progress.
type restoreSession struct {
	js   *JetStream
	cfg  api.StreamConfig
	subj string
	sub  *server.Subscription
	in   chan restoreChunk

	client uint64    // the requester, for the advisories
	start  time.Time // when the restore began
	bytes  int64     // archive bytes received

	mu   sync.Mutex
	done bool
}

// handleChunk runs on the sender's goroutine: it only queues the chunk.
func (rs *restoreSession) handleChunk(m *server.Msg) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done {
		return
	}
	c := restoreChunk{data: append([]byte(nil), m.Data...), reply: strings.Clone(m.Reply)}
	select {
	case rs.in <- c:
	default:
		rs.js.srv.Publish(c.reply, "", nil, restoreErrorReply(errors.New("too many chunks in flight: wait for each chunk's ack")))
	}
}

// finish stops taking chunks.
func (rs *restoreSession) finish() {
	rs.mu.Lock()
	rs.done = true
	rs.mu.Unlock()
	rs.sub.Unsubscribe()
}

// restoreErrorReply is the reply to a chunk (or the end) when the restore
// failed: a stream create response with the error, as nats-server sends.
func restoreErrorReply(err error) []byte {
	desc := err.Error()
	if !strings.HasPrefix(desc, "restore failed") {
		desc = "restore failed: " + desc
	}
	b, _ := json.Marshal(api.StreamCreateResponse{Response: api.Response{Type: api.TypeStreamCreate,
		Error: api.Errorf(api.ErrStreamRestore, "%s", desc)}})
	return b
}

// run feeds the chunks to the archive reader, acking each once it is
// consumed, and answers the empty end message with the new stream's info.
func (rs *restoreSession) run() {
	defer rs.finish()
	js := rs.js
	defer func() { js.adviseRestoreComplete(rs.cfg.Name, rs.start, rs.bytes, rs.client) }()
	pr, pw := io.Pipe()
	b := newRestoreBuilder(js, rs.cfg)
	result := make(chan error, 1)
	go func() {
		err := readArchive(pr, b)
		if err == nil {
			// Whatever follows the archive's end is read and ignored, so
			// the sender never blocks on it.
			_, err = io.Copy(io.Discard, pr)
		}
		pr.CloseWithError(err)
		result <- err
	}()
	fail := func(reply string, err error) {
		pw.CloseWithError(err)
		<-result
		b.abort()
		js.log.Warn("restore failed", "stream", rs.cfg.Name, "error", err)
		if reply != "" {
			js.srv.Publish(reply, "", nil, restoreErrorReply(err))
		}
	}
	idle := time.NewTimer(js.cfg.waits.restoreIdle)
	defer idle.Stop()
	for {
		var c restoreChunk
		select {
		case c = <-rs.in:
		case <-js.stopSweep: // closed by Close
			fail("", fmt.Errorf("restore of stream %s: JetStream is shutting down", rs.cfg.Name))
			return
		case <-idle.C:
			fail("", fmt.Errorf("restore of stream %s stalled: no chunk for %v", rs.cfg.Name, js.cfg.waits.restoreIdle))
			return
		}
		if len(c.data) == 0 {
			pw.Close()
			err := <-result
			if err != nil {
				b.abort()
				js.log.Warn("restore failed", "stream", rs.cfg.Name, "error", err)
				js.srv.Publish(c.reply, "", nil, restoreErrorReply(err))
				return
			}
			info, err := js.installRestored(b)
			if err != nil {
				js.log.Warn("restore failed", "stream", rs.cfg.Name, "error", err)
				js.srv.Publish(c.reply, "", nil, restoreErrorReply(err))
				return
			}
			info.Config = validate.WithDynamicMetadata(info.Config, js.srv.Version())
			resp, err := json.Marshal(api.StreamCreateResponse{Response: api.Response{Type: api.TypeStreamCreate}, StreamInfo: info})
			if err == nil {
				js.srv.Publish(c.reply, "", nil, resp)
			}
			js.adviseStream(rs.cfg.Name, api.ActionCreate)
			js.log.Info("stream restored", "stream", rs.cfg.Name, "messages", info.State.Msgs, "last_seq", info.State.LastSeq)
			return
		}
		if c.reply == "" {
			fail("", fmt.Errorf("restore of stream %s: a chunk without a reply subject", rs.cfg.Name))
			return
		}
		rs.bytes += int64(len(c.data))
		if _, err := pw.Write(c.data); err != nil {
			fail(c.reply, err)
			return
		}
		js.srv.Publish(c.reply, "", nil, nil)
		idle.Reset(js.cfg.waits.restoreIdle)
	}
}
