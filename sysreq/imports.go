package sysreq

import (
	"fmt"

	"github.com/jetwal/jetwal/server"
)

// The requests every account other than the system account may send.
// nats-server serves the server requests in its system account only
// (always one: "$SYS", without users, when none is configured) and
// imports a few of its services into every other account, each mapped to
// the importing account's own subject:
//
//	$SYS.REQ.SERVER.PING.CONNZ   -> $SYS.REQ.ACCOUNT.<account>.CONNZ
//	$SYS.REQ.ACCOUNT.PING.CONNZ  -> $SYS.REQ.ACCOUNT.<account>.CONNZ
//	$SYS.REQ.ACCOUNT.PING.STATZ  -> $SYS.REQ.ACCOUNT.<account>.STATZ
//	$SYS.REQ.USER.INFO           -> $SYS.REQ.USER.<account>.INFO
//
// so a client of a user account learns about its own account's
// connections and statistics and about itself (userinfo.go), and any
// other $SYS.REQ subject has no responders there. jetwal subscribes those
// subjects in every such account and answers with that account's
// documents, from every server of a cluster (the subscriptions travel on
// the routes, as the system account's do).

// importedKinds maps each imported subject to the account request kind
// it is answered as.
var importedKinds = map[string]string{
	"$SYS.REQ.SERVER.PING.CONNZ":  "CONNZ",
	"$SYS.REQ.ACCOUNT.PING.CONNZ": "CONNZ",
	"$SYS.REQ.ACCOUNT.PING.STATZ": "STATZ",
}

// subscribeImports subscribes the imported subjects in every account but
// the system account.
func (s *Service) subscribeImports() error {
	for _, name := range s.opts.Server.AccountNames() {
		acc := s.opts.Server.Account(name)
		if acc == s.acc {
			continue
		}
		for subj, kind := range importedKinds {
			sub, err := acc.Subscribe(subj, "", s.enqueueImport(acc, kind))
			if err != nil {
				return fmt.Errorf("sysreq: subscribe %s in account %s: %w", subj, name, err)
			}
			s.subs = append(s.subs, sub)
		}
	}
	return nil
}

// enqueueImport returns the handler of an imported request of account acc:
// the account request kind about acc, answered in acc.
func (s *Service) enqueueImport(acc *server.Account, kind string) func(*server.Msg) {
	return func(m *server.Msg) {
		if m.Reply == "" {
			return
		}
		r := pending{kind: kind, account: acc.Name(), reply: m.Reply, body: append([]byte(nil), m.Data...), cid: m.ClientID, acc: acc}
		select {
		case s.reqs <- r:
		default:
			s.opts.Logger.Warn("dropping a system request: too many waiting", "kind", kind, "account", r.account)
		}
	}
}
