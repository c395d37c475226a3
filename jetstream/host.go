package jetstream

import "github.com/jetwal/jetwal/server"

// Host is what JetStream needs of the server: the in-process client of the
// account it serves, and a few facts of the server. *server.Server (the
// global account $G) and *server.Account both implement it, so that one
// JetStream runs per account with JetStream.
type Host interface {
	Subscribe(subj, queue string, h server.Handler) (*server.Subscription, error)
	Publish(subj, reply string, hdr, data []byte)
	PublishAs(route, subj, reply string, hdr, data []byte) bool
	HasInterest(subj string) bool
	HasLiteralInterest(subj string) bool
	SetInterestHook(fn func())
	// Connection returns a client of the account, for advisories.
	Connection(cid uint64) (server.ConnInfo, bool)
	ServerName() string
	Version() string
	Options() server.Options
	OnShutdown(fn func())
}

var (
	_ Host = (*server.Server)(nil)
	_ Host = (*server.Account)(nil)
)
