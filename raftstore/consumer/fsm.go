package consumer

import (
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/consumerstate"
)

var _ raft.FSM = (*FSM)(nil)

// Result is what applying one change returned, on every replica alike.
type Result struct {
	Seq consumerstate.ConsumerSeq // OpDeliver, OpDeliverNoAck: the delivery's consumer sequence
	OK  bool                      // OpAck, OpNak, OpTerm: the message was pending
	N   int                       // OpAckAll: messages acknowledged
	Err error                     // a refused change (an invalid delivery, a bad entry)
}

// FSM holds one replica of a consumer's state. It is safe for concurrent
// use: raft applies from one goroutine while readers call State.
type FSM struct {
	mu sync.Mutex
	st consumerstate.State
}

// New returns an FSM with an empty state.
func New() *FSM { return &FSM{} }

// State returns a copy of the current state.
func (f *FSM) State() consumerstate.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st.Clone()
}

// Apply applies one change.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	e, err := Decode(l.Data)
	if err != nil {
		return &Result{Err: fmt.Errorf("raft index %d: %w", l.Index, err)}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var r Result
	switch e.Op {
	case OpDeliver:
		r.Seq, r.Err = f.st.Deliver(e.Seq, e.DCount, e.Time)
	case OpDeliverNoAck:
		r.Seq, r.Err = f.st.DeliverNoAck(e.Seq)
	case OpAck:
		r.OK = f.st.Ack(e.Seq)
	case OpAckAll:
		r.N = f.st.AckAll(e.Seq)
	case OpNak:
		r.OK = f.st.Nak(e.Seq, e.Time)
	case OpTerm:
		r.OK = f.st.Term(e.Seq)
	case OpReset:
		f.st.Reset(e.Seq)
	}
	return &r
}

// Snapshot captures the state, encoded as consumerstate encodes it.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return snapshot(consumerstate.Encode(&f.st)), nil
}

// Restore replaces the state with a snapshot's.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("consumer: read snapshot: %w", err)
	}
	st, err := consumerstate.Decode(b)
	if err != nil {
		return fmt.Errorf("consumer: snapshot: %w", err)
	}
	f.mu.Lock()
	f.st = *st
	f.mu.Unlock()
	return nil
}

type snapshot []byte

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("consumer: write snapshot: %w", err)
	}
	return sink.Close()
}

func (snapshot) Release() {}
