package jetstream

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

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

const serverRemoveSubject = api.Prefix + "SERVER.REMOVE"

// ServeServerRemove answers $JS.API.SERVER.REMOVE in sys, the system
// account, while this server is the meta leader; the removed server's
// replicas move in the streams of every account's JetStream in all (js's
// own included). It does nothing without a cluster.
func (js *JetStream) ServeServerRemove(sys *server.Account, all []*JetStream) (*server.Subscription, error) {
	if !js.clustered() || sys == nil {
		return nil, nil
	}
	return sys.Subscribe(serverRemoveSubject, "", func(m *server.Msg) {
		if m.Reply == "" || !js.cl.c.IsMetaLeader() {
			return
		}
		hdr, data, reply := bytes.Clone(m.Header), bytes.Clone(m.Data), strings.Clone(m.Reply)
		// The removal waits for a commit: off the publisher's goroutine.
		go js.serverRemove(sys, all, hdr, data, reply)
	})
}

func (js *JetStream) serverRemove(sys *server.Account, all []*JetStream, hdr, data []byte, reply string) {
	resp := api.MetaServerRemoveResponse{Response: api.Response{Type: api.TypeMetaServerRemove}}
	answer := func() {
		b, err := json.Marshal(resp)
		if err != nil {
			return
		}
		js.apiTotal.Add(1)
		if resp.Error != nil {
			js.apiErrors.Add(1)
		}
		sys.Publish(reply, "", nil, b)
	}
	if len(hdr) > 0 && apiserver.LevelTooLow(hdr) {
		resp.Error = api.NewError(api.ErrRequiredApiLevel)
		answer()
		return
	}
	if apiserver.IsEmpty(data) {
		resp.Error = api.NewError(api.ErrBadRequest)
		answer()
		return
	}
	var req api.MetaServerRemoveRequest
	if aerr := apiserver.Decode(data, &req); aerr != nil {
		resp.Error = aerr
		answer()
		return
	}
	id, err := js.cl.c.RemoveServer(req.Server, req.PeerID)
	switch {
	case err != nil:
		resp.Error = api.RaftGeneral(err)
	case id == "":
		resp.Error = api.NewError(api.ErrClusterServerNotMember)
	default:
		resp.Success = true
		for _, each := range all {
			if each.clustered() {
				each.moveReplicasOff(id)
			}
		}
	}
	answer()
}

// moveReplicasOff gives every replicated stream held by the removed
// server gone another server in its place, or none when placement finds
// none.
func (js *JetStream) moveReplicasOff(gone string) {
	for _, a := range js.assignments() {
		if len(a.Peers) < 2 || !slices.Contains(a.Peers, gone) {
			continue
		}
		rest := slices.DeleteFunc(slices.Clone(a.Peers), func(p string) bool { return p == gone })
		peers, aerr := js.placeStream(&a.Config, len(a.Peers), rest, []string{gone})
		if aerr != nil {
			js.log.Warn("cluster: no server to replace a removed server's replica", "stream", a.Config.Name, "reason", aerr.Description)
			peers = rest
		}
		if len(a.Initial) == 0 {
			a.Initial = slices.Clone(a.Peers)
		}
		a.Peers = peers
		a.Initial = slices.DeleteFunc(a.Initial, func(p string) bool { return p == gone })
		if err := js.propose(streamKeyPrefix+a.Config.Name, a); err != nil {
			js.log.Error("cluster: moving a removed server's replica", "stream", a.Config.Name, "error", err)
		}
	}
}
