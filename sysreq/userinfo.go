package sysreq

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
)

// $SYS.REQ.USER.INFO: who am I. nats-server answers it in every account
// with the requester's user and account (natscli's `nats account info`
// prints them). jetwal answers it in every account of the server; the
// server the requester is connected to answers (another server of the
// cluster, which does not know the client, stays silent).

// UserInfoSubject is the request subject.
const UserInfoSubject = "$SYS.REQ.USER.INFO"

const kindUserInfo = "USER.INFO"

// UserInfo is the data of the answer, in nats-server's shape.
type UserInfo struct {
	User        string       `json:"user"`
	Account     string       `json:"account"`
	AccountName string       `json:"account_name,omitempty"`
	Permissions *Permissions `json:"permissions,omitempty"`
}

// Permissions are a user's permissions in nats-server's JSON.
type Permissions struct {
	Publish   *SubjectPermission  `json:"publish,omitempty"`
	Subscribe *SubjectPermission  `json:"subscribe,omitempty"`
	Response  *ResponsePermission `json:"responses,omitempty"`
}

// SubjectPermission is an allow and a deny list.
type SubjectPermission struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// ResponsePermission is allow_responses: replies per request and for how
// long (nanoseconds, as nats-server's time.Duration).
type ResponsePermission struct {
	MaxMsgs int           `json:"max"`
	Expires time.Duration `json:"ttl"`
}

// permissionsOf converts p (nil = unrestricted, no permissions shown).
func permissionsOf(p *auth.Permissions) *Permissions {
	if p == nil {
		return nil
	}
	sp := func(s *auth.SubjectPermission) *SubjectPermission {
		if s == nil {
			return nil
		}
		return &SubjectPermission{Allow: s.Allow, Deny: s.Deny}
	}
	out := &Permissions{Publish: sp(p.Publish), Subscribe: sp(p.Subscribe)}
	if r := p.Response; r != nil {
		out.Response = &ResponsePermission{MaxMsgs: r.MaxMsgs, Expires: r.Expires}
	}
	return out
}

// subscribeUserInfo serves UserInfoSubject in every account.
func (s *Service) subscribeUserInfo() error {
	for _, name := range s.opts.Server.AccountNames() {
		acc := s.opts.Server.Account(name)
		sub, err := acc.Subscribe(UserInfoSubject, "", func(m *server.Msg) {
			if m.Reply == "" || m.ClientID == 0 {
				return
			}
			r := pending{kind: kindUserInfo, reply: m.Reply, acc: acc, cid: m.ClientID}
			select {
			case s.reqs <- r:
			default:
				s.opts.Logger.Warn("dropping a user info request: too many waiting")
			}
		})
		if err != nil {
			return fmt.Errorf("sysreq: subscribe %s in account %s: %w", UserInfoSubject, name, err)
		}
		s.subs = append(s.subs, sub)
	}
	return nil
}

// answerUserInfo answers r with its requester's identity, when the
// requester is a client of this server in the account it asked in.
func (s *Service) answerUserInfo(r pending) {
	ci, ok := r.acc.Connection(r.cid)
	if !ok {
		return
	}
	acc := cmpOr(ci.Account, monitor.GlobalAccount)
	b, err := json.Marshal(&Response{Server: s.info(), Data: UserInfo{User: ci.AuthorizedUser, Account: acc, AccountName: acc, Permissions: permissionsOf(ci.Permissions)}})
	if err != nil {
		s.opts.Logger.Error("encoding a user info answer", "err", err)
		return
	}
	r.acc.Publish(r.reply, "", nil, b)
}
