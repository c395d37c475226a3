package sysreq

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nuid"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// Connection events: $SYS.ACCOUNT.<account>.CONNECT and .DISCONNECT for
// every client, whatever its account, in nats-server's schema, published
// in the system account.

// Event types, nats-server's schema names.
const (
	ConnectEventType    = "io.nats.server.advisory.v1.client_connect"
	DisconnectEventType = "io.nats.server.advisory.v1.client_disconnect"
)

// ConnectEvent is nats-server's ConnectEventMsg.
type ConnectEvent struct {
	Type   string     `json:"type"`
	ID     string     `json:"id"`
	Time   time.Time  `json:"timestamp"`
	Server ServerInfo `json:"server"`
	Client ClientInfo `json:"client"`
}

// DisconnectEvent is nats-server's DisconnectEventMsg.
type DisconnectEvent struct {
	Type     string     `json:"type"`
	ID       string     `json:"id"`
	Time     time.Time  `json:"timestamp"`
	Server   ServerInfo `json:"server"`
	Client   ClientInfo `json:"client"`
	Sent     DataStats  `json:"sent"`
	Received DataStats  `json:"received"`
	Reason   string     `json:"reason"`
}

// ClientInfo is nats-server's ClientInfo with the fields jetwal knows.
type ClientInfo struct {
	Start      *time.Time `json:"start,omitempty"`
	Host       string     `json:"host,omitempty"`
	ID         uint64     `json:"id,omitempty"`
	Account    string     `json:"acc,omitempty"`
	User       string     `json:"user,omitempty"`
	Name       string     `json:"name,omitempty"`
	Lang       string     `json:"lang,omitempty"`
	Version    string     `json:"ver,omitempty"`
	Server     string     `json:"server,omitempty"`
	Cluster    string     `json:"cluster,omitempty"`
	Stop       *time.Time `json:"stop,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	ClientType string     `json:"client_type,omitempty"`
}

// Event subjects of the global account; another account's have its name
// in place of $G (ConnectSubjectOf).
const (
	ConnectSubject    = "$SYS.ACCOUNT." + monitor.GlobalAccount + ".CONNECT"
	DisconnectSubject = "$SYS.ACCOUNT." + monitor.GlobalAccount + ".DISCONNECT"
)

// ConnectSubjectOf and DisconnectSubjectOf are the event subjects of the
// clients of account acc ("" = $G).
func ConnectSubjectOf(acc string) string {
	return "$SYS.ACCOUNT." + cmpOr(acc, monitor.GlobalAccount) + ".CONNECT"
}

// DisconnectSubjectOf: see ConnectSubjectOf.
func DisconnectSubjectOf(acc string) string {
	return "$SYS.ACCOUNT." + cmpOr(acc, monitor.GlobalAccount) + ".DISCONNECT"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// connEvent queues a connection event (server hook: must not block).
func (s *Service) connEvent(ev server.ConnEvent) {
	select {
	case s.events <- ev:
	default:
		s.opts.Logger.Warn("dropping a connection event: too many waiting", "cid", ev.Info.CID)
	}
}

// publishEvent sends one connection event to whoever subscribes, here or
// on another server of the cluster.
func (s *Service) publishEvent(ev server.ConnEvent) {
	info := s.info()
	ci := ev.Info
	start := ci.Start.UTC()
	client := ClientInfo{
		Start: &start, Host: ci.IP, ID: ci.CID, Account: cmpOr(ci.Account, monitor.GlobalAccount), User: ci.AuthorizedUser,
		Name: ci.Name, Lang: ci.Lang, Version: ci.Version, Server: info.Name, Cluster: info.Cluster,
		Kind: "Client", ClientType: "nats",
	}
	now := time.Now().UTC()
	var subj string
	var v any
	if ev.Connect {
		subj = ConnectSubjectOf(ci.Account)
		v = &ConnectEvent{Type: ConnectEventType, ID: nuid.Next(), Time: now, Server: *info, Client: client}
	} else {
		subj = DisconnectSubjectOf(ci.Account)
		client.Stop = &now
		v = &DisconnectEvent{
			Type: DisconnectEventType, ID: nuid.Next(), Time: now, Server: *info, Client: client,
			Sent:     DataStats{Msgs: ci.OutMsgs, Bytes: ci.OutBytes},
			Received: DataStats{Msgs: ci.InMsgs, Bytes: ci.InBytes},
			Reason:   ev.Reason,
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		s.opts.Logger.Error("encoding a connection event", "err", err)
		return
	}
	s.acc.Publish(subj, "", nil, b)
}
