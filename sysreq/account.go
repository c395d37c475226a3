package sysreq

import (
	"fmt"
	"strings"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// Account requests, nats-server's $SYS.REQ.ACCOUNT.<account>.<kind>:
//
//	SUBSZ   the subscription counts (server-wide, as nats-server's)
//	CONNZ   the account's connections
//	JSZ     the account's JetStream detail (streams, consumers as asked)
//	INFO    the account's /accountz detail
//	STATZ   the account's connection and message counts
//
// and $SYS.REQ.ACCOUNT.PING.STATZ (every account with connections) and
// $SYS.REQ.ACCOUNT.PING.CONNZ (the connections of the asker's account),
// which `nats account report statistics` and `nats server report` use,
// all in the system account. Other accounts ask about themselves only
// (imports.go).

// AccountKinds are the account request kinds answered.
var AccountKinds = []string{"SUBSZ", "CONNZ", "JSZ", "INFO", "STATZ"}

// accountPing is the account token of the account-wide ping subjects.
const accountPing = "PING"

// subscribeAccounts subscribes $SYS.REQ.ACCOUNT.*.<kind> for every kind.
func (s *Service) subscribeAccounts() error {
	for _, k := range AccountKinds {
		subj := "$SYS.REQ.ACCOUNT.*." + k
		sub, err := s.acc.Subscribe(subj, "", func(m *server.Msg) { s.enqueueAccount(m) })
		if err != nil {
			return fmt.Errorf("sysreq: subscribe %s: %w", subj, err)
		}
		s.subs = append(s.subs, sub)
	}
	return nil
}

// enqueueAccount queues an account request, its account and kind taken
// from the subject.
func (s *Service) enqueueAccount(m *server.Msg) {
	tk := strings.Split(m.Subject, ".")
	if len(tk) != 5 || m.Reply == "" {
		return
	}
	r := pending{kind: tk[4], account: tk[3], reply: m.Reply, body: append([]byte(nil), m.Data...), cid: m.ClientID}
	select {
	case s.reqs <- r:
	default:
		s.opts.Logger.Warn("dropping a system request: too many waiting", "kind", r.kind, "account", r.account)
	}
}

// accountHandler returns the handler of an account request.
func (s *Service) accountHandler(r pending) (handler, bool) {
	m := s.opts.Monitor
	acc := r.account
	switch r.kind {
	case "SUBSZ":
		return handler{run: func() (any, error) { return m.Subsz(), nil }}, true
	case "CONNZ":
		var o ConnzEventOptions
		return handler{opts: &o, run: func() (any, error) {
			o.Account = acc
			if acc == accountPing {
				// The asker's own account; one not connected here sees none.
				if o.Account = m.AccountOf(r.cid); o.Account == "" {
					o.Account = accountPing
				}
			}
			return m.Connz(o.ConnzOptions)
		}}, true
	case "JSZ":
		var o monitor.JszOptions
		return handler{opts: &o, run: func() (any, error) {
			o.Account = acc
			return m.JszAccount(o)
		}}, true
	case "INFO":
		return handler{run: func() (any, error) { return m.AccountInfo(acc) }}, true
	case "STATZ":
		var o monitor.AccountStatzOptions
		return handler{opts: &o, run: func() (any, error) {
			if acc != accountPing {
				o.Accounts = []string{acc}
			}
			st := m.AccountStatz(o)
			if len(st.Accounts) == 0 && !o.IncludeUnused {
				return nil, errSkip
			}
			return st, nil
		}}, true
	}
	return handler{}, false
}
