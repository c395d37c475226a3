package mux

import (
	"reflect"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// pipeline sends appends on a connection of its own without waiting for
// each answer; one goroutine reads the answers, which come in order. At
// most two appends are in flight (NetworkTransport's default): the one
// whose answer is being read and the one sent after it.
//
// While it is open, the group's other RPCs to the same target (the
// leader's heartbeats, above all) ride it too (Transport.call), in line
// with the appends, so that a leader keeps one connection per follower
// rather than two.
type pipeline struct {
	t        *Transport
	c        *rpcConn
	sendMu   sync.Mutex         // one request written and queued at a time
	inflight chan *appendFuture // sent, answer not read
	done     chan raft.AppendFuture
	shutdown chan struct{}
	once     sync.Once
}

// AppendEntriesPipeline opens a pipeline of appends to target.
func (t *Transport) AppendEntriesPipeline(_ raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	c, err := t.conn(target)
	if err != nil {
		return nil, err
	}
	p := &pipeline{t: t, c: c, inflight: make(chan *appendFuture), done: make(chan raft.AppendFuture),
		shutdown: make(chan struct{})}
	go p.readAnswers()
	t.addPipeline(target, p)
	return p, nil
}

func (p *pipeline) readAnswers() {
	for {
		select {
		case f := <-p.inflight:
			if p.t.timeout > 0 {
				_ = p.c.c.SetReadDeadline(time.Now().Add(p.t.timeout))
			}
			ok, err := p.c.receive(f.resp)
			f.finish(err)
			if !ok {
				// The connection is broken: calls take a connection of
				// their own from now on; raft hears of it from the answer.
				p.t.removePipeline(p)
			}
			if f.rpc {
				continue // a call's answer goes to its caller only
			}
			select {
			case p.done <- f:
			case <-p.shutdown:
				return
			}
		case <-p.shutdown:
			return
		}
	}
}

// AppendEntries sends req; its answer comes through Consumer.
func (p *pipeline) AppendEntries(req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	f := &appendFuture{start: time.Now(), req: req, resp: resp, ready: make(chan struct{})}
	if err := p.enqueue(rpcAppendEntries, req, f); err != nil {
		return nil, err
	}
	return f, nil
}

// enqueue writes one request and queues f for its answer, in the order
// written.
func (p *pipeline) enqueue(typ uint8, req any, f *appendFuture) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	select {
	case <-p.shutdown:
		return raft.ErrPipelineShutdown
	default:
	}
	if p.t.timeout > 0 {
		_ = p.c.c.SetWriteDeadline(time.Now().Add(p.t.timeout))
	}
	if err := p.c.send(typ, req); err != nil {
		p.Close()
		return err
	}
	select {
	case p.inflight <- f:
		return nil
	case <-p.shutdown:
		return raft.ErrPipelineShutdown
	}
}

// call makes one RPC of another kind than a pipelined append on the
// pipeline's connection and waits for its answer, which the remote
// decodes into resp. The request waits behind the appends sent before it.
func (p *pipeline) call(typ uint8, req, resp any) error {
	// The answer is read into a value of the call's own and copied to
	// resp once it is in: a call that gives up on a shut pipeline sends
	// again elsewhere into resp, while readAnswers may still be decoding
	// the first answer (a data race the race detector caught in
	// TestTransportInstallSnapshot).
	into := reflect.New(reflect.TypeOf(resp).Elem())
	f := &appendFuture{rpc: true, resp: into.Interface(), ready: make(chan struct{})}
	if err := p.enqueue(typ, req, f); err != nil {
		return err
	}
	select {
	case <-f.ready:
		if f.err == nil {
			reflect.ValueOf(resp).Elem().Set(into.Elem())
		}
		return f.err
	case <-p.shutdown:
		return raft.ErrPipelineShutdown
	}
}

// Consumer is where the answered appends come, in the order sent.
func (p *pipeline) Consumer() <-chan raft.AppendFuture { return p.done }

// Close closes the pipeline's connection.
func (p *pipeline) Close() error {
	p.once.Do(func() {
		p.c.close()
		close(p.shutdown)
		p.t.removePipeline(p)
	})
	return nil
}

// appendFuture is one pipelined append, or with rpc set one call
// (pipeline.call) whose answer goes to its caller, not to Consumer.
type appendFuture struct {
	rpc   bool
	start time.Time
	req   *raft.AppendEntriesRequest
	resp  any // *raft.AppendEntriesResponse unless rpc
	err   error
	ready chan struct{}
}

func (f *appendFuture) finish(err error) {
	f.err = err
	close(f.ready)
}

// Error waits for the answer and returns its error.
func (f *appendFuture) Error() error {
	<-f.ready
	return f.err
}

// Start is when the append was sent.
func (f *appendFuture) Start() time.Time { return f.start }

// Request is the append sent.
func (f *appendFuture) Request() *raft.AppendEntriesRequest { return f.req }

// Response is the answer; valid once Error returned nil.
func (f *appendFuture) Response() *raft.AppendEntriesResponse {
	r, _ := f.resp.(*raft.AppendEntriesResponse)
	return r
}
