package server

// PublishAs delivers a message to the subscriptions matching route, but
// presents it with subject subj (the subject of the MSG/HMSG line and of an
// internal handler's Msg). JetStream uses it to hand a stored message to a
// pull request's inbox or a push consumer's deliver subject under the
// message's own subject, as nats-server does. It reports whether any
// subscription received the message.
func (s *Server) PublishAs(route, subj, reply string, hdr, data []byte) bool {
	res := s.subs.Match(route)
	if res.Empty() {
		return false
	}
	d := delivery{
		subj:     stringView(subj),
		reply:    stringView(reply),
		hdr:      hdr,
		data:     data,
		subjStr:  subj,
		replyStr: reply,
	}
	return s.deliver(&d, res)
}
