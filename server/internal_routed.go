package server

import (
	"errors"

	"github.com/jetwal/jetwal/subject"
)

// Cluster-wide internal subscriptions. Ordinary internal subscriptions
// (JetStream's) are local to their server: see route.go. A few services
// must be reached from any server of the cluster and answer across it, as
// nats-server's $SYS.REQ.SERVER.PING is answered by every server: for them
// SubscribeRouted announces the interest to the routes like a TCP client's
// subscription, messages from routes are handed to them, and
// PublishRouted sends the answer to the routes whose servers want it.

// SubscribeRouted is Subscribe (no queue group) with the interest sent to
// the other servers of the cluster, so that their clients' messages on
// subj reach h. Without a cluster it is Subscribe.
func (s *Server) SubscribeRouted(subj string, h Handler) (*Subscription, error) {
	if h == nil {
		return nil, errors.New("server: subscribe: nil handler")
	}
	if !subject.ValidFilter(subj) {
		return nil, ErrInvalidSubject
	}
	sub := &subscription{handler: h, subject: subj, routed: true}
	if err := s.insertRoutedSub(sub); err != nil {
		return nil, ErrInvalidSubject
	}
	s.interestChanged()
	return &Subscription{srv: s, sub: sub}, nil
}

func (s *Server) insertRoutedSub(sub *subscription) error {
	cl := s.cluster
	if cl == nil {
		return s.subs.Insert(sub.subject, sub.queue, sub)
	}
	cl.imu.Lock()
	defer cl.imu.Unlock()
	if err := s.subs.Insert(sub.subject, sub.queue, sub); err != nil {
		return err
	}
	cl.noteLocked(interestKey{sub.subject, sub.queue}, 1)
	return nil
}

// removeRoutedSub is insertRoutedSub's reverse.
func (s *Server) removeRoutedSub(sub *subscription) {
	cl := s.cluster
	if cl == nil {
		_ = s.subs.Remove(sub.subject, sub.queue, sub)
		return
	}
	cl.imu.Lock()
	defer cl.imu.Unlock()
	if err := s.subs.Remove(sub.subject, sub.queue, sub); err == nil {
		cl.noteLocked(interestKey{sub.subject, sub.queue}, -1)
	}
}

// PublishRouted is Publish that also forwards the message, once, to every
// route whose server announced plain interest in subj (replies to a client
// of another server, typically). Queue groups of other servers are not
// served. Safe from any goroutine, including inside a Handler.
func (s *Server) PublishRouted(subj, reply string, hdr, data []byte) {
	s.Publish(subj, reply, hdr, data)
	cl := s.cluster
	if cl == nil || !subject.ValidPublish(subj) {
		return
	}
	res := cl.remote.MatchOnce(subj)
	if res.Empty() {
		return
	}
	seen := make(map[*client]bool, len(res.Plain))
	for _, rs := range res.Plain {
		if seen[rs.route] {
			continue
		}
		seen[rs.route] = true
		s.forwardInternal(rs.route, []byte(subj), []byte(reply), hdr, data)
	}
}

// forwardInternal queues one RMSG/HMSG to route dst and wakes its writer.
func (s *Server) forwardInternal(dst *client, subj, reply, hdr, data []byte) {
	if dst.closed.Load() {
		return
	}
	acc := s.cluster.account
	withHdr := dst.route.headers.Load()
	need := routeMsgSize(acc, subj, reply, nil, hdr, data)
	dst.out.mu.Lock()
	if dst.out.mu.closing {
		dst.out.mu.Unlock()
		return
	}
	ch := dst.out.appendable(need)
	n := len(ch.b)
	ch.b = appendRouteMsg(ch.b, withHdr, acc, subj, reply, nil, hdr, data)
	dst.out.mu.size += len(ch.b) - n
	dst.out.mu.Unlock()
	dst.kickWriter()
	dst.stats.outMsgs.Add(1)
	dst.stats.outBytes.Add(int64(len(hdr) + len(data)))
}
