package mux

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// pipeline sends appends on a connection of its own without waiting for
// each answer; one goroutine reads the answers, which come in order. At
// most two appends are in flight (NetworkTransport's default): the one
// whose answer is being read and the one sent after it.
type pipeline struct {
	t        *Transport
	c        *rpcConn
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
	return p, nil
}

func (p *pipeline) readAnswers() {
	for {
		select {
		case f := <-p.inflight:
			if p.t.timeout > 0 {
				_ = p.c.c.SetReadDeadline(time.Now().Add(p.t.timeout))
			}
			_, err := p.c.receive(f.resp)
			f.finish(err)
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
	if p.t.timeout > 0 {
		_ = p.c.c.SetWriteDeadline(time.Now().Add(p.t.timeout))
	}
	if err := p.c.send(rpcAppendEntries, req); err != nil {
		return nil, err
	}
	select {
	case p.inflight <- f:
		return f, nil
	case <-p.shutdown:
		return nil, raft.ErrPipelineShutdown
	}
}

// Consumer is where the answered appends come, in the order sent.
func (p *pipeline) Consumer() <-chan raft.AppendFuture { return p.done }

// Close closes the pipeline's connection.
func (p *pipeline) Close() error {
	p.once.Do(func() {
		p.c.close()
		close(p.shutdown)
	})
	return nil
}

// appendFuture is one pipelined append.
type appendFuture struct {
	start time.Time
	req   *raft.AppendEntriesRequest
	resp  *raft.AppendEntriesResponse
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
func (f *appendFuture) Response() *raft.AppendEntriesResponse { return f.resp }
