package server

import (
	"errors"

	"github.com/jetwal/jetwal/subject"
)

// Msg is a message handed to an internal subscription. Header and Data
// point into the publisher's buffers and are valid only during the handler
// call; copy them to keep them. Subject and Reply are ordinary strings.
type Msg struct {
	Subject string
	Reply   string
	Header  []byte // raw "NATS/1.0 …\r\n…\r\n\r\n" block, nil when absent
	Data    []byte
	// ClientID is the id of the publishing client, 0 for Server.Publish.
	ClientID uint64
}

// Handler receives messages for an internal subscription. It runs
// synchronously on the publisher's goroutine and must not block; it may
// call Server.Publish.
type Handler func(m *Msg)

// Subscription is an internal (in-process) subscription.
type Subscription struct {
	srv *Server
	sub *subscription
}

// ErrInvalidSubject is returned by Subscribe for a malformed filter.
var ErrInvalidSubject = errors.New("server: invalid subject")

// Subscribe registers h for messages on subj (wildcards allowed), as a
// member of queue group queue when queue is not empty. Messages from TCP
// clients and from Publish reach it without a network hop.
func (s *Server) Subscribe(subj, queue string, h Handler) (*Subscription, error) {
	if h == nil {
		return nil, errors.New("server: subscribe: nil handler")
	}
	if !subject.ValidFilter(subj) {
		return nil, ErrInvalidSubject
	}
	sub := &subscription{handler: h, subject: subj, queue: queue}
	if err := s.insertClientSub(sub); err != nil {
		return nil, ErrInvalidSubject
	}
	s.interestChanged()
	return &Subscription{srv: s, sub: sub}, nil
}

// Unsubscribe removes the subscription. Calling it again does nothing.
func (sub *Subscription) Unsubscribe() { sub.srv.removeInternal(sub.sub) }

// Subject returns the subscribed filter.
func (sub *Subscription) Subject() string { return sub.sub.subject }

func (s *Server) removeInternal(sub *subscription) {
	if !sub.closed.CompareAndSwap(false, true) {
		return
	}
	_ = s.removeClientSub(sub)
	s.interestChanged()
}

// Publish delivers a message to every matching subscription, TCP and
// internal, like a client PUB (HPUB when hdr is not empty; clients without
// header support get the data only). hdr must be a complete header block or
// nil. Safe from any goroutine, including from inside a Handler. Invalid
// subjects are dropped. Internal publishes mostly answer requests (PubAcks,
// API responses) on one-off reply inboxes, so their lookups do not fill the
// subject cache (sublist.MatchOnce).
func (s *Server) Publish(subj, reply string, hdr, data []byte) {
	res := s.subs.MatchOnce(subj)
	var remote *remoteResult
	if s.cluster != nil {
		remote = s.cluster.remote.MatchOnce(subj)
	}
	if res.Empty() && (remote == nil || remote.Empty()) {
		return
	}
	d := delivery{
		subj:     stringView(subj),
		reply:    stringView(reply),
		hdr:      hdr,
		data:     data,
		subjStr:  subj,
		replyStr: reply,
	}
	s.deliver(&d, res)
	if remote != nil && !remote.Empty() {
		s.forwardInternal(&d, res, remote)
	}
}

// HasInterest reports whether any subscription matches the literal subject:
// here, or on another server of the cluster.
func (s *Server) HasInterest(subj string) bool {
	return s.subs.HasInterest(subj) || s.HasRemoteInterest(subj)
}

// HasRemoteInterest reports whether another server of the cluster
// announced a subscription matching the literal subject.
func (s *Server) HasRemoteInterest(subj string) bool {
	return s.cluster != nil && s.cluster.remote.HasInterest(subj)
}
