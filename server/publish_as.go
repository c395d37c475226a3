package server

import (
	"bytes"
	"strings"
)

// PublishAs delivers a message to the subscriptions matching route, but
// presents it with subject subj (the subject of the MSG/HMSG line and of an
// internal handler's Msg). JetStream uses it to hand a stored message to a
// pull request's inbox or a push consumer's deliver subject under the
// message's own subject, as nats-server does. In a cluster, subscribers on
// other servers get it too (see presentHeader). It reports whether any
// subscription here received the message or a route took it.
// It publishes in $G; Account.PublishAs in another account.
func (s *Server) PublishAs(route, subj, reply string, hdr, data []byte) bool {
	return s.gacc.PublishAs(route, subj, reply, hdr, data)
}

// PublishAs is Server.PublishAs in this account.
func (a *Account) PublishAs(route, subj, reply string, hdr, data []byte) bool {
	s := a.srv
	res := a.subs.Match(route)
	var remote *remoteResult
	if a.remote != nil {
		remote = a.remote.MatchOnce(route)
	}
	routed := remote != nil && !remote.Empty()
	if res.Empty() && !routed {
		return false
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
	delivered := s.dispatch(&d, res, &audience{remote: remote, f: &f})
	if routed {
		fd := delivery{acc: a, subj: stringView(route), reply: d.reply, hdr: withPresented(hdr, subj), data: data}
		s.forwardInternal(&fd, &f)
		delivered = true
	}
	return delivered
}

// A message forwarded for PublishAs travels under the subject it is routed
// by (the inbox), and carries the subject it is presented with in a header
// line that the receiving jetwal removes before delivery, right after the
// first (status) line of the header block:
//
//	Jetwal-Present: <subject> <1 if the message had a header, else 0>
const presentHeader = "Jetwal-Present: "

func withPresented(hdr []byte, subj string) []byte {
	had := "1"
	if len(hdr) == 0 {
		hdr, had = []byte("NATS/1.0\r\n\r\n"), "0"
	}
	i := bytes.Index(hdr, []byte("\r\n"))
	if i < 0 {
		return hdr
	}
	out := make([]byte, 0, len(hdr)+len(presentHeader)+len(subj)+4)
	out = append(out, hdr[:i+2]...)
	out = append(out, presentHeader...)
	out = append(out, subj...)
	out = append(out, ' ')
	out = append(out, had...)
	out = append(out, "\r\n"...)
	return append(out, hdr[i+2:]...)
}

// takePresented removes the presentation line from a routed header block:
// it returns the subject to present (ok false when there is none) and the
// message's own header (nil when it had none).
func takePresented(hdr []byte) (subj string, own []byte, ok bool) {
	i := bytes.Index(hdr, []byte("\r\n"))
	if i < 0 || !bytes.HasPrefix(hdr[i+2:], []byte(presentHeader)) {
		return "", hdr, false
	}
	rest := hdr[i+2+len(presentHeader):]
	j := bytes.Index(rest, []byte("\r\n"))
	if j < 0 {
		return "", hdr, false
	}
	field := string(rest[:j])
	k := strings.LastIndexByte(field, ' ')
	if k <= 0 {
		return "", hdr, false
	}
	subj = field[:k]
	if field[k+1:] == "0" {
		return subj, nil, true
	}
	own = make([]byte, 0, len(hdr))
	own = append(own, hdr[:i+2]...)
	return subj, append(own, rest[j+2:]...), true
}
