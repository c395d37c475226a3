package jetstream

import (
	"errors"
	"fmt"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
)

// Leader step-downs of the meta group and of consumers.
//
// $JS.API.META.LEADER.STEPDOWN is, as in nats-server, a request of the
// system account: the JetStream API of the account JetStream serves ($G)
// leaves it unanswered (apiserver's registerCluster), and every server of the
// cluster subscribes to it in the system account (ServeMetaStepDown, wired
// by package serve). The system account's subscriptions travel over the
// routes like any other account's, so a request published by a system user
// on any server reaches every server; the meta leader alone answers.
//
// A consumer of a replicated stream has no raft group of its own: it runs
// on the stream's leader, its state checkpointed into the meta group
// (cluster_consumer.go). Its leader is the stream's leader, so
// $JS.API.CONSUMER.LEADER.STEPDOWN.<stream>.<consumer> moves the stream's
// leadership, and with it every consumer of the stream, to another
// replica; the answer is nats-server's success.

const metaStepDownSubject = api.Prefix + "META.LEADER.STEPDOWN"

// ServeMetaStepDown answers $JS.API.META.LEADER.STEPDOWN in sys, the
// system account, while this server is the meta leader. It does nothing
// without a cluster (nats-server has no such subscription either).
func (js *JetStream) ServeMetaStepDown(sys *server.Account) (*server.Subscription, error) {
	// A transfer waits for the new leader: serveMetaOp runs it off the
	// publisher's goroutine.
	return js.serveMetaOp(sys, metaStepDownSubject, api.TypeMetaLeaderStepDown, js.metaStepDown)
}

func (js *JetStream) metaStepDown(data []byte) *api.ApiError {
	req, aerr := apiserver.DecodeStepDown(data)
	var preferred string
	if aerr == nil {
		preferred, aerr = js.stepDownTarget(req.Placement, js.cl.c.Peers(), js.cl.c.Self())
	}
	if aerr != nil {
		return aerr
	}
	if err := js.cl.c.StepDownMeta(preferred); err != nil {
		return api.RaftGeneral(err)
	}
	js.log.Info("JetStream cluster: meta leader stepped down on request", "preferred", preferred)
	return nil
}

// stepDownTarget returns the server name a step-down's placement p sends
// the leadership to ("" = any other member), or nats-server's error: a
// preferred server that leads already or is not a member, or no member
// left once the cluster name and tags (server_tags: each requested tag must
// be among the member's) have filtered them.
func (js *JetStream) stepDownTarget(p *api.Placement, peers []string, self string) (string, *api.ApiError) {
	if p == nil {
		return "", nil
	}
	c := js.cl.c
	if p.Preferred != "" {
		for _, peer := range peers {
			if c.NameOf(peer) != p.Preferred {
				continue
			}
			if peer == self {
				return "", api.ClusterNoPeers(fmt.Errorf("preferred server %q is already leader", p.Preferred))
			}
			return p.Preferred, nil
		}
		return "", api.ClusterNoPeers(fmt.Errorf("preferred server %q not known", p.Preferred))
	}
	n := 0
	for _, peer := range peers {
		if _, bad := firstMismatch(c.Tags(peer), lowerTags(p.Tags), nil); bad != 0 {
			continue
		}
		if peer != self && c.Connected(peer) && (p.Cluster == "" || p.Cluster == c.Name()) {
			n++
		}
	}
	if n == 0 {
		return "", api.ClusterNoPeers(errors.New("no replacement peer connected"))
	}
	return "", nil
}

// StepDownConsumer moves the leadership of a consumer: its stream's (see
// the file's comment; apiserver.ClusterOps).
func (js *JetStream) StepDownConsumer(name, cons string, req api.LeaderStepDownRequest, bodyErr *api.ApiError) *api.ApiError {
	s := js.lookup(name)
	if s == nil {
		return api.NewError(api.ErrStreamNotFound)
	}
	if s.cons.get(cons) == nil {
		return api.NewError(api.ErrConsumerNotFound)
	}
	if s.rep == nil || js.cl == nil {
		// An R1 stream's consumer has no group: nats-server answers
		// success without moving anything.
		return nil
	}
	a, ok := js.assignment(name)
	if !ok {
		return api.NewError(api.ErrStreamNotFound)
	}
	if bodyErr != nil {
		return bodyErr
	}
	preferred, aerr := js.stepDownTarget(req.Placement, a.Peers, js.cl.c.Self())
	if aerr != nil {
		return aerr
	}
	if err := s.rep.StepDownTo(preferred); err != nil {
		return api.RaftGeneral(err)
	}
	return nil
}

// consumerCluster is the cluster block of a consumer's info: its leader is
// its stream's (this server, which runs it), its replicas the stream's.
func (js *JetStream) consumerCluster(s *stream) *api.ClusterInfo {
	return js.clusterInfo(s)
}
