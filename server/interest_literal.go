package server

// HasLiteralInterest reports whether a subscription on exactly subj exists,
// not counting wildcards that cover it. A client's request inbox mux
// (_INBOX.<id>.*) covers every inbox the client makes up, before the client
// subscribed any of them; a sender that must wait for the real subscriber
// (a snapshot's deliver subject) waits for this.
// Other servers' subscriptions of exactly subj count too (the subscriber
// may be a client of another server of the cluster).
// It looks in $G; Account.HasLiteralInterest in another account.
func (s *Server) HasLiteralInterest(subj string) bool { return s.gacc.HasLiteralInterest(subj) }

// HasLiteralInterest is Server.HasLiteralInterest in this account.
func (a *Account) HasLiteralInterest(subj string) bool {
	r := a.subs.MatchOnce(subj)
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
	if a.remote == nil {
		return false
	}
	rr := a.remote.MatchOnce(subj)
	for _, rs := range rr.Plain {
		if rs.subject == subj {
			return true
		}
	}
	for _, q := range rr.Queues {
		for _, rs := range q {
			if rs.subject == subj {
				return true
			}
		}
	}
	return false
}
