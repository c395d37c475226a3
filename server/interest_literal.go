package server

// HasLiteralInterest reports whether a subscription on exactly subj exists,
// not counting wildcards that cover it. A client's request inbox mux
// (_INBOX.<id>.*) covers every inbox the client makes up, before the client
// subscribed any of them; a sender that must wait for the real subscriber
// (a snapshot's deliver subject) waits for this.
func (s *Server) HasLiteralInterest(subj string) bool {
	r := s.subs.MatchOnce(subj)
	for _, sub := range r.Plain {
		if sub.subject == subj {
			return true
		}
	}
	for _, q := range r.Queues {
		for _, sub := range q {
			if sub.subject == subj {
				return true
			}
		}
	}
	return false
}
