package mux

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Shared heartbeats. hashicorp/raft's leader sends every follower of every
// group it leads a heartbeat every HeartbeatTimeout/10 to /5, each an RPC
// of its own: with 100 R3 streams a server sent and answered ~2,000 a
// second when idle, a write and a read syscall and a goroutine wake at
// each end, most of the idle CPU (make bench-cluster-scale). Groups that
// share heartbeats (Transport.ShareHeartbeats) send theirs as nats-server
// does, once per pair of servers:
//
//   - A heartbeat call (Transport.AppendEntries of a heartbeat) registers
//     the group's request with the sender to its target server and returns
//     the answer the target gave to the last round, if that round ended
//     within fresh (1.5 periods, see timing) and answered this very
//     request (same term and leader). Otherwise it asks for a round at
//     once and waits for it.
//   - A sender per target server runs a round every period (the shortest
//     any sharing group asked for) while some group has called within
//     forget (3 periods): one frame with the requests of
//     all those groups on a connection of its own (a raft connection for
//     the group beatsGroup, authenticated on the route port as every raft
//     connection is), and one frame back with an answer per request.
//   - The target hands each request to its group's heartbeat handler, as
//     it would a heartbeat received alone (raft's processHeartbeat), and
//     answers with what the handler answered: a follower that has moved to
//     a later term says so, and the leader steps down on its next call.
//
// What this changes for raft: a leader learns of a follower's contact up
// to fresh late (the answer it is given is at most that old), so a
// partitioned leader keeps its lease up to fresh longer; a follower is
// told of its leader every period whatever raft's own heartbeat timing;
// and a group whose leader stopped calling (stepped down, closed) is in
// the rounds up to forget longer (Transport.Close removes it at once).
const (
	// beatsGroup names the shared heartbeat connection in its raft
	// preamble; group names of streams and of the meta group never
	// start with '$'.
	beatsGroup = "$beats"
	// maxBeats bounds the requests of one round a server reads.
	maxBeats = 1 << 16
)

// beatReq is one group's heartbeat in a round.
type beatReq struct {
	Group string
	Req   raft.AppendEntriesRequest
}

// beatAnswer is the answer to the beatReq at the same position.
type beatAnswer struct {
	Err  string
	Resp raft.AppendEntriesResponse
}

// beater runs the shared heartbeats of one Mux: a sender per target.
type beater struct {
	m *Mux

	mu      sync.Mutex
	every   time.Duration // between rounds; 0: nobody shares
	senders map[raft.ServerAddress]*beatSender
	closed  bool
}

func newBeater(m *Mux) *beater {
	return &beater{m: m, senders: make(map[raft.ServerAddress]*beatSender)}
}

// share makes rounds at least every every.
func (b *beater) share(every time.Duration) {
	b.mu.Lock()
	if b.every == 0 || every < b.every {
		b.every = every
	}
	b.mu.Unlock()
}

// timing returns the round period and how long an answer stays fresh and
// a silent group stays in the rounds.
func (b *beater) timing() (every, fresh, forget time.Duration) {
	b.mu.Lock()
	every = b.every
	b.mu.Unlock()
	return every, every + every/2, 3 * every
}

// beatEntry is one group's heartbeat to one target.
type beatEntry struct {
	req      raft.AppendEntriesRequest // the last one raft asked to send
	called   time.Time                 // when raft last asked
	answered time.Time                 // when ans came; zero: none usable
	ansTerm  uint64                    // the term of the request ans answers
	ansAddr  string                    // and its leader
	ans      raft.AppendEntriesResponse
	waiting  []chan beatResult // calls waiting for the next round
}

type beatResult struct {
	resp raft.AppendEntriesResponse
	err  error
}

// beat is a heartbeat call of group to target (see the comment above).
func (b *beater) beat(group string, target raft.ServerAddress, req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse, timeout time.Duration) error {
	s, err := b.sender(target)
	if err != nil {
		return err
	}
	_, fresh, _ := b.timing()
	now := time.Now()
	s.mu.Lock()
	e := s.groups[group]
	if e == nil {
		e = &beatEntry{}
		s.groups[group] = e
	}
	e.req, e.called = *req, now
	if !e.answered.IsZero() && now.Sub(e.answered) < fresh && e.ansTerm == req.Term && e.ansAddr == string(leaderAddr(req)) {
		*resp = e.ans
		s.mu.Unlock()
		return nil
	}
	ch := make(chan beatResult, 1)
	e.waiting = append(e.waiting, ch)
	s.mu.Unlock()
	s.kick()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.err == nil {
			*resp = r.resp
		}
		return r.err
	case <-s.done:
		return ErrClosed
	case <-t.C:
		return fmt.Errorf("mux: heartbeat of group %s to %s: no answer in %v", group, target, timeout)
	}
}

// forget removes group from every sender's rounds (its transport closed).
func (b *beater) forget(group string) {
	b.mu.Lock()
	senders := make([]*beatSender, 0, len(b.senders))
	for _, s := range b.senders {
		senders = append(senders, s)
	}
	b.mu.Unlock()
	for _, s := range senders {
		s.mu.Lock()
		if e := s.groups[group]; e != nil {
			for _, ch := range e.waiting {
				ch <- beatResult{err: ErrTransportClosed}
			}
			// A round under way holds e: it must find nobody to answer
			// (each channel holds one result).
			e.waiting = nil
			delete(s.groups, group)
		}
		s.mu.Unlock()
	}
}

// close stops every sender.
func (b *beater) close() {
	b.mu.Lock()
	b.closed = true
	senders := b.senders
	b.senders = map[raft.ServerAddress]*beatSender{}
	b.mu.Unlock()
	for _, s := range senders {
		s.stop()
	}
}

// sender returns target's sender, starting it.
func (b *beater) sender(target raft.ServerAddress) (*beatSender, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	s := b.senders[target]
	if s == nil {
		s = &beatSender{b: b, target: target, groups: make(map[string]*beatEntry),
			kickCh: make(chan struct{}, 1), done: make(chan struct{})}
		b.senders[target] = s
		go s.run()
	}
	return s, nil
}

// beatSender runs the rounds to one target server.
type beatSender struct {
	b      *beater
	target raft.ServerAddress
	kickCh chan struct{}
	done   chan struct{}
	once   sync.Once
	sent   atomic.Uint64 // rounds sent

	mu     sync.Mutex
	groups map[string]*beatEntry

	// The connection and frame buffers, used by run only.
	c   net.Conn
	r   *bufio.Reader
	out []byte
	in  []byte
}

func (s *beatSender) kick() {
	select {
	case s.kickCh <- struct{}{}:
	default:
	}
}

func (s *beatSender) stop() {
	s.once.Do(func() { close(s.done) })
}

// run makes a round every period, or at once when kicked, while some
// group calls.
func (s *beatSender) run() {
	defer s.hangUp()
	every, _, _ := s.b.timing()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			s.failAll(ErrClosed)
			return
		case <-tick.C:
		case <-s.kickCh:
		}
		s.round()
	}
}

// round sends the requests of the groups that called within forget
// and hands out the answers.
func (s *beatSender) round() {
	_, _, forget := s.b.timing()
	now := time.Now()
	var (
		reqs    []beatReq
		entries []*beatEntry
	)
	s.mu.Lock()
	for g, e := range s.groups {
		if now.Sub(e.called) > forget && len(e.waiting) == 0 {
			delete(s.groups, g)
			continue
		}
		reqs = append(reqs, beatReq{Group: g, Req: e.req})
		entries = append(entries, e)
	}
	s.mu.Unlock()
	if len(reqs) == 0 {
		return
	}
	answers, err := s.exchange(reqs)
	s.sent.Add(1)
	done := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range entries {
		var r beatResult
		switch {
		case err != nil:
			r.err = err
		case answers[i].Err != "":
			r.err = errors.New(answers[i].Err)
		default:
			r.resp = answers[i].Resp
		}
		if r.err == nil && e.req.Term == reqs[i].Req.Term {
			e.answered, e.ans = done, r.resp
			e.ansTerm, e.ansAddr = reqs[i].Req.Term, string(leaderAddr(&reqs[i].Req))
		} else if r.err != nil {
			e.answered = time.Time{}
		}
		for _, ch := range e.waiting {
			ch <- r
		}
		e.waiting = nil
	}
}

// exchange sends one round and reads its answers, dialing first if need
// be. On error the connection is closed (the next round dials again).
func (s *beatSender) exchange(reqs []beatReq) ([]beatAnswer, error) {
	const timeout = 5 * time.Second
	if s.c == nil {
		c, err := s.b.m.dialBeats(s.target, timeout)
		if err != nil {
			return nil, err
		}
		s.c, s.r = c, bufio.NewReaderSize(c, answerBuffer)
	}
	_ = s.c.SetDeadline(time.Now().Add(timeout))
	s.out = appendRound(s.out[:0], reqs)
	_, err := s.c.Write(s.out)
	var answers []beatAnswer
	if err == nil {
		s.in, err = readFrame(s.r, s.in)
	}
	if err == nil {
		answers, err = parseAnswers(s.in, len(reqs))
	}
	if err != nil {
		s.hangUp()
		return nil, fmt.Errorf("mux: heartbeats to %s: %w", s.target, err)
	}
	return answers, nil
}

func (s *beatSender) hangUp() {
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
}

// failAll answers every waiting call with err.
func (s *beatSender) failAll(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.groups {
		for _, ch := range e.waiting {
			ch <- beatResult{err: err}
		}
		e.waiting = nil
	}
}

// dialBeats opens the shared heartbeat connection to target.
func (m *Mux) dialBeats(target raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if m.dial == nil {
		return nil, errors.New("mux: no dialer")
	}
	return m.dial(string(target), beatsGroup, timeout)
}

// answerBeats serves a shared heartbeat connection: each round's requests
// go to their groups' heartbeat handlers, in order, and their answers go
// back as one frame. It returns when c fails or the Mux closes.
func (m *Mux) answerBeats(c net.Conn) {
	defer c.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-m.done:
			c.Close()
		case <-stop:
		}
	}()
	r := bufio.NewReaderSize(c, transportBuffer)
	var in, out []byte
	for {
		var err error
		if in, err = readFrame(r, in); err != nil {
			return
		}
		reqs, err := parseRound(in)
		if err != nil {
			m.log.Warn("raft mux: heartbeat round", "err", err, "remote", c.RemoteAddr().String())
			return
		}
		answers := make([]beatAnswer, len(reqs))
		for i := range reqs {
			resp, err := m.heartbeat(reqs[i].Group, &reqs[i].Req)
			if err != nil {
				answers[i].Err = err.Error()
			} else {
				answers[i].Resp = resp
			}
		}
		out = appendAnswers(out[:0], answers)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// heartbeat hands one shared heartbeat to group's handler.
func (m *Mux) heartbeat(group string, req *raft.AppendEntriesRequest) (raft.AppendEntriesResponse, error) {
	m.mu.Lock()
	l := m.groups[group]
	m.mu.Unlock()
	if l == nil {
		return raft.AppendEntriesResponse{}, fmt.Errorf("mux: no group %s here", group)
	}
	return l.heartbeat(req)
}
