package jetstream

import (
	"time"

	"github.com/nats-io/nuid"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
)

// Advisories: JetStream tells $JS.EVENT.ADVISORY.> (and $JS.EVENT.METRIC.>)
// what happens to streams, consumers and messages, as nats-server does.
// Every sender first asks the server whether anyone listens on the literal
// subject (a cached sublist lookup), and builds and encodes the event only
// then: with no subscriber an advisory costs that lookup and nothing else.
//
// Advisories are published with no lock of JetStream held: a stream may
// capture $JS.EVENT.> (keeping advisories is a common use), and its store
// runs inside the publish.

// newEvent starts an event of schema type typ.
func newEvent(typ string) api.TypedEvent {
	return api.TypedEvent{Type: typ, ID: nuid.Next(), Time: time.Now().UTC()}
}

// adviseStream reports a stream created, updated or deleted.
func (js *JetStream) adviseStream(name string, action api.Action) {
	prefix := api.SubjAdvisoryStreamCreated
	switch action {
	case api.ActionDelete:
		prefix = api.SubjAdvisoryStreamDeleted
	case api.ActionModify:
		prefix = api.SubjAdvisoryStreamUpdated
	}
	subj := prefix + name
	if !js.listening(subj) {
		return
	}
	js.publishEvent(subj, api.StreamAction{
		TypedEvent: newEvent(api.TypeAdvisoryStreamAction), Stream: name, Action: action,
	})
}

// adviseConsumer reports a consumer created or deleted (nats-server sends
// none for an update).
func (js *JetStream) adviseConsumer(stream, name string, action api.Action) {
	prefix := api.SubjAdvisoryConsumerCreated
	if action == api.ActionDelete {
		prefix = api.SubjAdvisoryConsumerDeleted
	}
	subj := prefix + stream + "." + name
	if !js.listening(subj) {
		return
	}
	js.publishEvent(subj, api.ConsumerAction{
		TypedEvent: newEvent(api.TypeAdvisoryConsumerAction), Stream: stream, Consumer: name, Action: action,
	})
}

// auditAPI publishes the API audit advisory of a request answered with
// resp, as nats-server does for every request its API dispatcher answers.
func (js *JetStream) auditAPI(r *apiserver.Request, resp []byte) {
	if !js.listening(api.SubjAdvisoryAPI) {
		return
	}
	js.publishEvent(api.SubjAdvisoryAPI, api.APIAudit{
		TypedEvent: newEvent(api.TypeAdvisoryAPIAudit),
		Server:     js.srv.ServerName(),
		Client:     js.clientInfo(r.Client),
		Subject:    r.Subject,
		Request:    string(r.Data),
		Response:   string(resp),
	})
}

// clientInfo describes the client cid for an advisory; nil for a request
// made inside the server (cid 0) or by a client gone since.
func (js *JetStream) clientInfo(cid uint64) *api.ClientInfo {
	if cid == 0 {
		return nil
	}
	ci, ok := js.srv.Connection(cid)
	if !ok {
		return &api.ClientInfo{ID: cid, Account: js.cfg.Account, Server: js.srv.ServerName()}
	}
	start := ci.Start.UTC()
	return &api.ClientInfo{
		Start: &start, Host: ci.IP, ID: ci.CID, Account: js.cfg.Account, User: ci.AuthorizedUser,
		Name: ci.Name, Lang: ci.Lang, Version: ci.Version, Server: js.srv.ServerName(),
		Kind: "Client", Type: "nats",
	}
}
