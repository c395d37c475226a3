package mux

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
)

// Transport is a group's raft.Transport over its Layer. It speaks
// hashicorp/raft's NetworkTransport protocol (so servers running either
// talk to each other): a connection carries one RPC at a time, or a
// pipeline of appends; a request is its type byte and the msgpack
// encoding of the request (an InstallSnapshot's is followed by the
// snapshot's bytes); an answer is the msgpack error string ("" for none)
// and the msgpack response.
//
// It exists for its buffers. NetworkTransport gives every connection
// 256 KiB buffers at both ends, and a stream group of three keeps about
// four connections open (a pipeline and a heartbeat connection from its
// leader to each follower): 100 R3 streams held ~200 MiB of buffers per
// server (make bench-cluster-scale, issue 49). Here a connection's
// buffers are transportBuffer for what its side sends in bulk (the
// requests of the dialing side, which carry the entries, and the
// requests the accepting side reads) and answerBuffer for the small
// answers.
//
// A leader also sends its heartbeats (and any other RPC but a snapshot)
// on its open pipeline to the follower rather than on a connection of
// their own (pipeline.call), and a pooled connection left idle for
// poolIdle is closed: a stream group of three keeps two connections
// open, one from its leader to each follower. A group that shares its
// heartbeats (ShareHeartbeats) sends them in the Mux's rounds instead
// (beats.go).
type Transport struct {
	layer   *Layer
	timeout time.Duration
	handle  *codec.MsgpackHandle

	consumer chan raft.RPC
	shutdown chan struct{}
	once     sync.Once

	hbMu sync.Mutex
	hb   func(raft.RPC) // the heartbeat fast path (SetHeartbeatHandler)

	poolMu sync.Mutex
	pool   map[raft.ServerAddress]*rpcConn  // one idle connection per peer
	pipes  map[raft.ServerAddress]*pipeline // the open pipeline per peer

	shared atomic.Bool // heartbeats go by the Mux's shared rounds (ShareHeartbeats)

	received atomic.Uint64 // the last command entry received (Received)
	commit   atomic.Uint64 // the highest commit index a leader sent (Received)
}

// poolIdle is how long a pooled connection stays open unused.
const poolIdle = 10 * time.Second

const (
	// transportBuffer is the buffer of requests, sent and read: appends
	// larger than it are written through it unbuffered, not truncated.
	transportBuffer = 16 << 10
	// answerBuffer is the buffer of answers, sent and read.
	answerBuffer = 1 << 10
	// snapshotTimeoutScale: an InstallSnapshot gets the RPC timeout once
	// per this many bytes of snapshot (NetworkTransport's scale).
	snapshotTimeoutScale = 256 << 10
)

// The RPC type bytes of NetworkTransport's protocol.
const (
	rpcAppendEntries uint8 = iota
	rpcRequestVote
	rpcInstallSnapshot
	rpcTimeoutNow
	rpcRequestPreVote
)

// ErrTransportClosed is returned by RPCs of a closed Transport.
var ErrTransportClosed = errors.New("mux: transport closed")

var (
	_ raft.Transport   = (*Transport)(nil)
	_ raft.WithClose   = (*Transport)(nil)
	_ raft.WithPreVote = (*Transport)(nil)
)

// NewTransport serves raft RPCs for l's group: it accepts l's connections
// until closed, and dials through l. timeout bounds each RPC (an
// InstallSnapshot's scales with its size).
func NewTransport(l *Layer, timeout time.Duration) *Transport {
	t := &Transport{layer: l, timeout: timeout, handle: &codec.MsgpackHandle{},
		consumer: make(chan raft.RPC), shutdown: make(chan struct{}),
		pool: make(map[raft.ServerAddress]*rpcConn), pipes: make(map[raft.ServerAddress]*pipeline)}
	l.SetHandler(t.serve)
	l.setBeat(t.beat)
	return t
}

// ShareHeartbeats sends this group's heartbeats with every other sharing
// group's to the same server, in one round per pair of servers at least
// every every (beats.go). Call it before raft starts; raft's heartbeat
// interval (HeartbeatTimeout/10) is the natural every.
func (t *Transport) ShareHeartbeats(every time.Duration) {
	t.layer.mux.beats.share(every)
	t.shared.Store(true)
}

// beat answers a shared heartbeat as the heartbeat handler answers one
// received alone.
func (t *Transport) beat(req *raft.AppendEntriesRequest) (raft.AppendEntriesResponse, error) {
	if !t.shared.Load() {
		return raft.AppendEntriesResponse{}, fmt.Errorf("mux: group %s takes no shared heartbeats", t.layer.group)
	}
	respCh := make(chan raft.RPCResponse, 1)
	rpc := raft.RPC{Command: req, RespChan: respCh}
	t.hbMu.Lock()
	fn := t.hb
	t.hbMu.Unlock()
	if fn != nil {
		fn(rpc)
	} else {
		select {
		case t.consumer <- rpc:
		case <-t.shutdown:
			return raft.AppendEntriesResponse{}, ErrTransportClosed
		}
	}
	select {
	case r := <-respCh:
		if r.Error != nil {
			return raft.AppendEntriesResponse{}, r.Error
		}
		resp, ok := r.Response.(*raft.AppendEntriesResponse)
		if !ok {
			return raft.AppendEntriesResponse{}, fmt.Errorf("mux: group %s: heartbeat answered with %T", t.layer.group, r.Response)
		}
		return *resp, nil
	case <-t.shutdown:
		return raft.AppendEntriesResponse{}, ErrTransportClosed
	}
}

// Consumer is where raft takes the RPCs received.
func (t *Transport) Consumer() <-chan raft.RPC { return t.consumer }

// LocalAddr is the address peers dial to reach this group.
func (t *Transport) LocalAddr() raft.ServerAddress {
	return raft.ServerAddress(t.layer.Addr().String())
}

// EncodePeer encodes a peer's address as raft stores it.
func (t *Transport) EncodePeer(_ raft.ServerID, addr raft.ServerAddress) []byte { return []byte(addr) }

// DecodePeer decodes what EncodePeer made.
func (t *Transport) DecodePeer(b []byte) raft.ServerAddress { return raft.ServerAddress(b) }

// SetHeartbeatHandler sets the function heartbeats go to instead of the
// consumer, so that they are not queued behind a long append.
func (t *Transport) SetHeartbeatHandler(fn func(raft.RPC)) {
	t.hbMu.Lock()
	t.hb = fn
	t.hbMu.Unlock()
}

// Close stops serving and closes the idle connections; the layer's Close
// closes the ones in use.
func (t *Transport) Close() error {
	t.once.Do(func() {
		close(t.shutdown)
		if t.shared.Load() {
			t.layer.mux.beats.forget(t.layer.group)
		}
		t.poolMu.Lock()
		for addr, c := range t.pool {
			c.close()
			delete(t.pool, addr)
		}
		t.poolMu.Unlock()
	})
	return nil
}

func (t *Transport) closed() bool {
	select {
	case <-t.shutdown:
		return true
	default:
		return false
	}
}

// rpcConn is a dialed connection with its encoder and decoder.
type rpcConn struct {
	target raft.ServerAddress
	c      net.Conn
	w      *bufio.Writer
	enc    *codec.Encoder
	dec    *codec.Decoder

	// Guarded by the transport's poolMu:
	used time.Time   // when it last went back to the pool
	idle *time.Timer // closes it once unused for poolIdle
}

func (c *rpcConn) close() { c.c.Close() }

// conn returns the idle connection to target, or dials one.
func (t *Transport) conn(target raft.ServerAddress) (*rpcConn, error) {
	if t.closed() {
		return nil, ErrTransportClosed
	}
	t.poolMu.Lock()
	c := t.pool[target]
	delete(t.pool, target)
	t.poolMu.Unlock()
	if c != nil {
		return c, nil
	}
	nc, err := t.dial(target)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(nc, transportBuffer)
	return &rpcConn{target: target, c: nc, w: w,
		enc: codec.NewEncoder(w, t.handle),
		dec: codec.NewDecoder(bufio.NewReaderSize(nc, answerBuffer), t.handle)}, nil
}

// A dial the peer refuses (its server is down, its host up) is tried
// again every refusedRetry for refusedWait before the RPC fails.
// hashicorp/raft backs off exponentially after each failed RPC to a
// follower (10 ms, doubling, up to 10 s for its replication) and a refusal
// takes microseconds, so a follower restarted within a second or two found
// its leaders (the meta group's first) waiting most of a second more before
// they tried it again, and every replica of the restarted server waited
// for that. Failing no sooner than refusedWait keeps the failures, and so
// the backoff, few, and the retries see the peer back within refusedRetry.
const (
	refusedWait  = 250 * time.Millisecond
	refusedRetry = 25 * time.Millisecond
)

// dial opens a connection to target through the layer, retrying a refused
// dial for refusedWait.
func (t *Transport) dial(target raft.ServerAddress) (net.Conn, error) {
	end := time.Now().Add(refusedWait)
	for {
		nc, err := t.layer.Dial(target, t.timeout)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(end) {
			return nc, err
		}
		select {
		case <-t.shutdown:
			return nil, err
		case <-time.After(refusedRetry):
		}
	}
}

// release keeps c as target's idle connection, or closes it when there
// is one already or the transport is closed.
func (t *Transport) release(c *rpcConn) {
	t.poolMu.Lock()
	defer t.poolMu.Unlock()
	if t.closed() || t.pool[c.target] != nil || t.pipes[c.target] != nil {
		c.close()
		return
	}
	t.pool[c.target] = c
	c.used = time.Now()
	if c.idle == nil {
		c.idle = time.AfterFunc(poolIdle, func() { t.closeIdle(c) })
	}
}

// closeIdle closes c if it sits in the pool unused for poolIdle, else
// looks again when it would be.
func (t *Transport) closeIdle(c *rpcConn) {
	t.poolMu.Lock()
	defer t.poolMu.Unlock()
	if t.pool[c.target] != c {
		c.idle = nil // in use (release arms a new timer) or closed
		return
	}
	if left := poolIdle - time.Since(c.used); left > 0 {
		c.idle.Reset(left)
		return
	}
	delete(t.pool, c.target)
	c.close()
}

// addPipeline makes p the connection the calls to target take; the idle
// pooled connection to target is closed.
func (t *Transport) addPipeline(target raft.ServerAddress, p *pipeline) {
	t.poolMu.Lock()
	defer t.poolMu.Unlock()
	t.pipes[target] = p
	if c := t.pool[target]; c != nil {
		delete(t.pool, target)
		c.close()
	}
}

// removePipeline forgets p, closed.
func (t *Transport) removePipeline(p *pipeline) {
	t.poolMu.Lock()
	defer t.poolMu.Unlock()
	if t.pipes[p.c.target] == p {
		delete(t.pipes, p.c.target)
	}
}

// pipelineTo returns the open pipeline to target, nil if none.
func (t *Transport) pipelineTo(target raft.ServerAddress) *pipeline {
	t.poolMu.Lock()
	defer t.poolMu.Unlock()
	return t.pipes[target]
}

// send writes one request. On error c is closed.
func (c *rpcConn) send(typ uint8, req any) error {
	err := c.w.WriteByte(typ)
	if err == nil {
		err = c.enc.Encode(req)
	}
	if err == nil {
		err = c.w.Flush()
	}
	if err != nil {
		c.close()
	}
	return err
}

// receive reads one answer into resp. A remote error is returned as
// such with ok true (c stays usable); a broken connection is closed and
// ok is false.
func (c *rpcConn) receive(resp any) (ok bool, err error) {
	var remote string
	if err := c.dec.Decode(&remote); err != nil {
		c.close()
		return false, err
	}
	if err := c.dec.Decode(resp); err != nil {
		c.close()
		return false, err
	}
	if remote != "" {
		return true, errors.New(remote)
	}
	return true, nil
}

// call makes one RPC on the open pipeline to target, else on a pooled
// connection.
func (t *Transport) call(target raft.ServerAddress, typ uint8, req, resp any) error {
	if p := t.pipelineTo(target); p != nil {
		// A pipeline closed under the call sends it again on a
		// connection of its own: raft's RPCs may arrive twice.
		if err := p.call(typ, req, resp); !errors.Is(err, raft.ErrPipelineShutdown) {
			return err
		}
	}
	c, err := t.conn(target)
	if err != nil {
		return err
	}
	if t.timeout > 0 {
		_ = c.c.SetDeadline(time.Now().Add(t.timeout))
	}
	if err := c.send(typ, req); err != nil {
		return err
	}
	ok, err := c.receive(resp)
	if ok {
		t.release(c)
	}
	return err
}

// AppendEntries sends one append (or heartbeat) and waits for the answer.
func (t *Transport) AppendEntries(_ raft.ServerID, target raft.ServerAddress, req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	if t.shared.Load() && isHeartbeat(req) {
		if t.closed() {
			return ErrTransportClosed
		}
		return t.layer.mux.beats.beat(t.layer.group, target, req, resp, t.timeout)
	}
	return t.call(target, rpcAppendEntries, req, resp)
}

// RequestVote asks target for its vote.
func (t *Transport) RequestVote(_ raft.ServerID, target raft.ServerAddress, req *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return t.call(target, rpcRequestVote, req, resp)
}

// RequestPreVote asks target whether it would vote.
func (t *Transport) RequestPreVote(_ raft.ServerID, target raft.ServerAddress, req *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.call(target, rpcRequestPreVote, req, resp)
}

// TimeoutNow asks target to start an election now (leadership transfer).
func (t *Transport) TimeoutNow(_ raft.ServerID, target raft.ServerAddress, req *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return t.call(target, rpcTimeoutNow, req, resp)
}

// InstallSnapshot sends a snapshot, read from data, on a connection of
// its own, closed after.
func (t *Transport) InstallSnapshot(_ raft.ServerID, target raft.ServerAddress, req *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	c, err := t.conn(target)
	if err != nil {
		return err
	}
	defer c.close()
	if t.timeout > 0 {
		_ = c.c.SetDeadline(time.Now().Add(t.timeout * time.Duration(max(1, req.Size/snapshotTimeoutScale))))
	}
	if err := c.send(rpcInstallSnapshot, req); err != nil {
		return err
	}
	if _, err := io.Copy(c.w, data); err != nil {
		return fmt.Errorf("mux: snapshot to %s: %w", target, err)
	}
	if err := c.w.Flush(); err != nil {
		return err
	}
	_, err = c.receive(resp)
	return err
}

// serve answers the RPCs of one accepted connection until it fails or
// the transport closes.
func (t *Transport) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, transportBuffer)
	w := bufio.NewWriterSize(c, answerBuffer)
	dec := codec.NewDecoder(r, t.handle)
	enc := codec.NewEncoder(w, t.handle)
	for {
		if err := t.answer(r, dec, enc); err != nil {
			return
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

// answer reads one request, hands it to raft and writes raft's answer.
func (t *Transport) answer(r *bufio.Reader, dec *codec.Decoder, enc *codec.Encoder) error {
	typ, err := r.ReadByte()
	if err != nil {
		return err
	}
	respCh := make(chan raft.RPCResponse, 1)
	rpc := raft.RPC{RespChan: respCh}
	heartbeat := false
	switch typ {
	case rpcAppendEntries:
		var req raft.AppendEntriesRequest
		if err := dec.Decode(&req); err != nil {
			return err
		}
		rpc.Command = &req
		heartbeat = isHeartbeat(&req)
		t.noteReceived(&req)
	case rpcRequestVote:
		var req raft.RequestVoteRequest
		if err := dec.Decode(&req); err != nil {
			return err
		}
		rpc.Command = &req
	case rpcRequestPreVote:
		var req raft.RequestPreVoteRequest
		if err := dec.Decode(&req); err != nil {
			return err
		}
		rpc.Command = &req
	case rpcInstallSnapshot:
		var req raft.InstallSnapshotRequest
		if err := dec.Decode(&req); err != nil {
			return err
		}
		rpc.Command = &req
		rpc.Reader = io.LimitReader(r, req.Size)
	case rpcTimeoutNow:
		var req raft.TimeoutNowRequest
		if err := dec.Decode(&req); err != nil {
			return err
		}
		rpc.Command = &req
	default:
		return fmt.Errorf("mux: unknown raft rpc type %d", typ)
	}
	dispatched := false
	if heartbeat {
		t.hbMu.Lock()
		fn := t.hb
		t.hbMu.Unlock()
		if fn != nil {
			fn(rpc)
			dispatched = true
		}
	}
	if !dispatched {
		select {
		case t.consumer <- rpc:
		case <-t.shutdown:
			return ErrTransportClosed
		}
	}
	select {
	case resp := <-respCh:
		remote := ""
		if resp.Error != nil {
			remote = resp.Error.Error()
		}
		if err := enc.Encode(remote); err != nil {
			return err
		}
		return enc.Encode(resp.Response)
	case <-t.shutdown:
		return ErrTransportClosed
	}
}

// isHeartbeat: an append that carries only the leader's term and
// address (what raft's heartbeat sends).
func isHeartbeat(req *raft.AppendEntriesRequest) bool {
	return req.Term != 0 && len(leaderAddr(req)) != 0 && req.PrevLogEntry == 0 && req.PrevLogTerm == 0 &&
		len(req.Entries) == 0 && req.LeaderCommitIndex == 0
}

// leaderAddr is the address of the leader that sent req.
func leaderAddr(req *raft.AppendEntriesRequest) []byte {
	if len(req.RPCHeader.Addr) != 0 {
		return req.RPCHeader.Addr
	}
	return req.Leader //nolint:staticcheck // older senders fill only this
}

// Received returns what appends have brought this member, as soon as each
// is read, before raft stores it: the index of the last command entry (what
// the FSM applies) and the highest commit index a leader announced. A
// member that has applied less is still storing, committing or applying
// them (or raft will drop a command a new leader's log replaces; a commit
// index may name an entry no FSM applies). 0 before any.
func (t *Transport) Received() (command, commit uint64) {
	return t.received.Load(), t.commit.Load()
}

func (t *Transport) noteReceived(req *raft.AppendEntriesRequest) {
	raiseTo(&t.commit, req.LeaderCommitIndex)
	for i := len(req.Entries) - 1; i >= 0; i-- {
		if e := req.Entries[i]; e.Type == raft.LogCommand {
			raiseTo(&t.received, e.Index)
			return
		}
	}
}

// raiseTo sets v to n unless it is already at least n.
func raiseTo(v *atomic.Uint64, n uint64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}
