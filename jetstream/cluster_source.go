package jetstream

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// Mirrors and sources across a cluster. A stream's feeds run where the
// stream is served (a replicated stream's leader: activate starts them,
// losing the leadership stops them), and read their origin in order
// (stream_source.go). When the origin is served by another server (a
// replicated origin led elsewhere, an R1 origin on another server), the
// feed asks that server for the messages past its position: a read
// request on readSubject, answered by the server serving the origin with
// up to readMax messages (readBytes in all). The request and answer
// travel in the server's internal account (Cluster.Gather/Answer), never
// through a client's account, and only within the account (the subjects
// carry it).
//
// A feed's position comes from its own stream's store (a mirror's last
// sequence, a source's last Nats-Stream-Source header), which a new
// leader has fully applied before it starts the feeds, and the old
// leader's writes fail once it is deposed: after a failover the feed
// resumes right after the last copy committed, with no gap and no repeat.

const (
	readSubject = "READ"
	readMax     = 256
	readBytes   = 256 << 10 // base64 in JSON stays well under a route's 1 MiB payload limit
	readWait    = time.Second
)

// readRequest asks for the messages of Stream from Seq on (0: from
// StartTime, or 1) matching Filter.
type readRequest struct {
	Stream    string     `json:"stream"`
	Seq       uint64     `json:"seq,omitempty"`
	StartTime *time.Time `json:"start_time,omitempty"`
	Filter    string     `json:"filter,omitempty"`
}

// readAnswer carries the messages read, in order; Start is where reading
// began (the resolved start when the request had none).
type readAnswer struct {
	Start uint64      `json:"start"`
	Msgs  []store.Msg `json:"msgs,omitempty"`
	Err   string      `json:"err,omitempty"`
}

// serveReads answers read requests for the streams this server serves.
func (js *JetStream) serveReads() error {
	stop, err := js.cl.c.Answer(readSubject, js.answerRead)
	if err != nil {
		return err
	}
	js.cl.mu.Lock()
	js.cl.stopReads = stop
	js.cl.mu.Unlock()
	return nil
}

func (js *JetStream) answerRead(_ string, data []byte) []byte {
	var req readRequest
	if json.Unmarshal(data, &req) != nil {
		return nil
	}
	s := js.lookup(req.Stream)
	if s == nil || s.rep != nil && !s.rep.IsLeader() {
		return nil // another server serves it, or nobody does yet
	}
	ans := readAnswer{Start: req.Seq}
	if ans.Start == 0 {
		ans.Start = 1
		if req.StartTime != nil {
			ans.Start = s.store.SeqForTime(*req.StartTime)
		}
	}
	size := 0
	for next := ans.Start; len(ans.Msgs) < readMax && size < readBytes; {
		var m store.Msg
		err := s.store.LoadNext(req.Filter, next, &m)
		if errors.Is(err, store.ErrEOF) {
			break
		}
		if err != nil {
			ans.Err = err.Error()
			break
		}
		ans.Msgs = append(ans.Msgs, m)
		size += len(m.Subject) + len(m.Header) + len(m.Data)
		next = m.Seq + 1
	}
	b, err := json.Marshal(ans)
	if err != nil {
		return nil
	}
	return b
}

// copyRemote copies what the origin, served by another server of the
// cluster, has past the feed's position. found is false when no server
// answered (no such stream, or it has no leader yet).
func (f *feed) copyRemote() (progressed, found bool) {
	js := f.s.js
	req := readRequest{Stream: f.src.Name, Seq: f.next.Load(), Filter: f.filter}
	if req.Seq == 0 {
		req.Seq = f.src.OptStartSeq
		if req.Seq == 0 {
			req.StartTime = f.src.OptStartTime
		}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return false, false
	}
	var ans *readAnswer
	err = js.cl.c.Gather(readSubject, body, readWait, func(b []byte) bool {
		var a readAnswer
		if json.Unmarshal(b, &a) != nil {
			return false
		}
		ans = &a
		return true
	})
	if err != nil || ans == nil {
		return false, false
	}
	f.err.Store(nil)
	if f.next.Load() == 0 {
		f.next.Store(max(ans.Start, 1))
	}
	for i := range ans.Msgs {
		m := &ans.Msgs[i]
		if m.Seq < f.next.Load() {
			continue // an answer to an older position
		}
		if aerr := f.store(m); aerr != nil {
			f.err.Store(aerr)
			return progressed, true
		}
		f.next.Store(m.Seq + 1)
		progressed = true
	}
	if ans.Err != "" {
		f.err.Store(api.Errorf(api.ErrStreamGeneral, "reading %s: %s", f.src.Name, ans.Err))
	}
	return progressed, true
}
