package jetstream

import (
	"slices"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
)

// $JS.API.SERVER.REMOVE (`nats server cluster peer-remove SERVER`): an
// operator takes a server that is gone for good out of the meta group,
// and the meta leader moves that server's replicas of replicated streams
// to other servers (placement permitting; else the stream goes on with
// the replicas it has left). As in nats-server it is a request of the
// system account only: like the meta step-down, it is subscribed in the
// system account alone (ServeServerRemove, wired by package serve), so a
// user of any other account gets no answer; the meta leader alone
// answers. A stream of one replica on that server keeps its assignment
// (its data is on the server that is gone).

const (
	serverRemoveSubject   = api.Prefix + "SERVER.REMOVE"
	serverEvacuateSubject = api.Prefix + "SERVER.EVACUATE"
)

// ServeServerRemove answers $JS.API.SERVER.REMOVE in sys, the system
// account, while this server is the meta leader; the removed server's
// replicas move in the streams of every account's JetStream in all (js's
// own included). It does nothing without a cluster.
func (js *JetStream) ServeServerRemove(sys *server.Account, all []*JetStream) (*server.Subscription, error) {
	// The removal waits for a commit: serveMetaOp runs it off the
	// publisher's goroutine.
	return js.serveMetaOp(sys, serverRemoveSubject, api.TypeMetaServerRemove, func(data []byte) *api.ApiError {
		return js.serverRemove(all, data)
	})
}

func (js *JetStream) serverRemove(all []*JetStream, data []byte) *api.ApiError {
	req, aerr := decodeServerRequest(data)
	if aerr != nil {
		return aerr
	}
	id, err := js.cl.c.RemoveServer(req.Server, req.PeerID)
	switch {
	case err != nil:
		return api.RaftGeneral(err)
	case id == "":
		return api.NewError(api.ErrClusterServerNotMember)
	}
	moveAllOff(all, id)
	return nil
}

// ServeServerEvacuate answers $JS.API.SERVER.EVACUATE (`nats server
// cluster evacuate SERVER`) in sys, the system account, while this server
// is the meta leader: the named server stays a member of the meta group,
// but every replicated stream it holds, in every account's JetStream in
// all, gets another server in its place (placement permitting, never the
// evacuated one); the new replica catches up before the old one leaves
// (cluster_members.go). R1 streams stay where they are (an R1 stream is a
// local stream: moving it is not built). The body is SERVER.REMOVE's:
// {"peer": name} or {"peer_id": raft id}.
func (js *JetStream) ServeServerEvacuate(sys *server.Account, all []*JetStream) (*server.Subscription, error) {
	return js.serveMetaOp(sys, serverEvacuateSubject, api.TypeMetaServerEvacuate, func(data []byte) *api.ApiError {
		req, aerr := decodeServerRequest(data)
		if aerr != nil {
			return aerr
		}
		id := js.cl.c.FindServer(req.Server, req.PeerID)
		if id == "" {
			return api.NewError(api.ErrClusterServerNotMember)
		}
		js.log.Info("JetStream cluster: evacuating a server", "peer", id, "name", req.Server)
		moveAllOff(all, id)
		return nil
	})
}

// decodeServerRequest reads the body of SERVER.REMOVE and SERVER.EVACUATE.
func decodeServerRequest(data []byte) (api.MetaServerRemoveRequest, *api.ApiError) {
	var req api.MetaServerRemoveRequest
	if apiserver.IsEmpty(data) {
		return req, api.NewError(api.ErrBadRequest)
	}
	aerr := apiserver.Decode(data, &req)
	return req, aerr
}

// moveAllOff moves the replicas of server gone in every clustered
// JetStream of all.
func moveAllOff(all []*JetStream, gone string) {
	for _, each := range all {
		if each.clustered() {
			each.moveReplicasOff(gone)
		}
	}
}

// moveReplicasOff gives every replicated stream held by the removed
// server gone another server in its place, or none when placement finds
// none.
func (js *JetStream) moveReplicasOff(gone string) {
	for _, a := range js.assignments() {
		if !a.grouped() || !slices.Contains(a.Peers, gone) {
			continue
		}
		rest := slices.DeleteFunc(slices.Clone(a.Peers), func(p string) bool { return p == gone })
		peers, aerr := js.placeStream(&a.Config, len(a.Peers), rest, []string{gone})
		if aerr != nil {
			js.log.Warn("cluster: no server to replace a removed server's replica", "stream", a.Config.Name, "reason", aerr.Description)
			peers = rest
		}
		a = a.withPeers(peers)
		if err := js.propose(streamKeyPrefix+a.Config.Name, a); err != nil {
			js.log.Error("cluster: moving a removed server's replica", "stream", a.Config.Name, "error", err)
		}
	}
}
