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

	from *client // the publishing connection, for Defer; nil for Server.Publish
}

// Handler receives messages for an internal subscription. It runs
// synchronously on the publisher's goroutine and must not block; it may
// call Server.Publish.
type Handler func(m *Msg)

// Subscription is an internal (in-process) subscription.
type Subscription struct {
	acc *Account
	sub *subscription
}

// ErrInvalidSubject is returned by Subscribe for a malformed filter.
var ErrInvalidSubject = errors.New("server: invalid subject")

// Subscribe registers h for messages on subj (wildcards allowed), as a
// member of queue group queue when queue is not empty. Messages from TCP
// clients and from Publish reach it without a network hop.
// It subscribes in $G; Account.Subscribe in another account.
func (s *Server) Subscribe(subj, queue string, h Handler) (*Subscription, error) {
	return s.gacc.Subscribe(subj, queue, h)
}

// Subscribe is Server.Subscribe in this account: only messages published
// in the account reach h.
func (a *Account) Subscribe(subj, queue string, h Handler) (*Subscription, error) {
	if h == nil {
		return nil, errors.New("server: subscribe: nil handler")
	}
	if !subject.ValidFilter(subj) {
		return nil, ErrInvalidSubject
	}
	sub := &subscription{handler: h, acc: a, subject: subj, queue: queue}
	if err := a.insertSub(sub); err != nil {
		return nil, ErrInvalidSubject
	}
	a.interestChanged()
	return &Subscription{acc: a, sub: sub}, nil
}

// Unsubscribe removes the subscription. Calling it again does nothing.
func (sub *Subscription) Unsubscribe() { sub.acc.removeInternal(sub.sub) }

// Subject returns the subscribed filter.
func (sub *Subscription) Subject() string { return sub.sub.subject }

func (a *Account) removeInternal(sub *subscription) {
	if !sub.closed.CompareAndSwap(false, true) {
		return
	}
	_ = a.removeSub(sub)
	a.interestChanged()
}

// Publish delivers a message to every matching subscription, TCP and
// internal, like a client PUB (HPUB when hdr is not empty; clients without
// header support get the data only). hdr must be a complete header block or
// nil. Safe from any goroutine, including from inside a Handler. Invalid
// subjects are dropped. Internal publishes mostly answer requests (PubAcks,
// API responses) on one-off reply inboxes, so their lookups do not fill the
// subject cache (sublist.MatchOnce).
// It publishes in $G; Account.Publish in another account.
func (s *Server) Publish(subj, reply string, hdr, data []byte) {
	s.gacc.Publish(subj, reply, hdr, data)
}

// Publish is Server.Publish in this account.
func (a *Account) Publish(subj, reply string, hdr, data []byte) {
	s := a.srv
	res := a.subs.MatchOnce(subj)
	var remote *remoteResult
	if a.remote != nil {
		remote = a.remote.MatchOnce(subj)
	}
	if res.Empty() && (remote == nil || remote.Empty()) {
		return
	}
	d := delivery{
		acc:      a,
		subj:     stringView(subj),
		reply:    stringView(reply),
		hdr:      hdr,
		data:     data,
		subjStr:  subj,
		replyStr: reply,
	}
	var f forwarding
	s.dispatch(&d, res, &audience{remote: remote, f: &f})
	s.forwardInternal(&d, &f)
}

// HasInterest reports whether any subscription matches the literal subject:
// here, or on another server of the cluster.
// It looks in $G; Account.HasInterest in another account.
func (s *Server) HasInterest(subj string) bool { return s.gacc.HasInterest(subj) }

// HasRemoteInterest reports whether another server of the cluster
// announced a subscription of $G matching the literal subject.
func (s *Server) HasRemoteInterest(subj string) bool { return s.gacc.HasRemoteInterest(subj) }

// HasInterest is Server.HasInterest in this account.
func (a *Account) HasInterest(subj string) bool {
	return a.subs.HasInterest(subj) || a.HasRemoteInterest(subj)
}

// HasRemoteInterest is Server.HasRemoteInterest in this account.
func (a *Account) HasRemoteInterest(subj string) bool {
	return a.remote != nil && a.remote.HasInterest(subj)
}
