package apiserver

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// registerCluster registers the operations only a cluster has; without
// one, moving a replica (STREAM.PEER.REMOVE, STREAM.PEER.EVACUATE) is
// refused and the step-downs are unknown operations.
func (s *Server) registerCluster(clustered bool) {
	// nats-server's evacuation moves a replica before the old one leaves,
	// which is what jetwal's peer removal does already: one operation,
	// two response types.
	moves := map[string]string{"STREAM.PEER.REMOVE": api.TypeStreamRemovePeer, "STREAM.PEER.EVACUATE": api.TypeStreamEvacuatePeer}
	// A consumer's replicas are its stream's (it runs with the stream's
	// leader; its state is checkpointed through the meta group), so a
	// consumer replica cannot move on its own: nats consumer cluster
	// evacuate and peer-remove get a clear refusal.
	for op, typ := range map[string]string{"CONSUMER.PEER.REMOVE": api.TypeConsumerRemovePeer, "CONSUMER.PEER.EVACUATE": api.TypeConsumerEvacuatePeer} {
		s.Register(op, Mgmt, func(r *Request) { s.consumerPeerMove(typ, clustered, r) })
	}
	if !clustered {
		for op, typ := range moves {
			s.Register(op, Mgmt, func(r *Request) {
				s.RespondError(r, typ, api.NewError(api.ErrClusterRequired))
			})
		}
		return
	}
	s.Register("STREAM.LEADER.STEPDOWN", Mgmt, s.streamStepDown)
	for op, typ := range moves {
		s.Register(op, Mgmt, func(r *Request) { s.streamRemovePeer(typ, r) })
	}
	s.Register("CONSUMER.LEADER.STEPDOWN", Mgmt, s.consumerStepDown)
	// Requests of the system account, which jetstream serves there
	// (JetStream.ServeMetaStepDown, ServeServerRemove, ServeServerEvacuate):
	// nats-server leaves them unanswered in other accounts.
	for _, op := range []string{"META.LEADER.STEPDOWN", "SERVER.REMOVE", "SERVER.EVACUATE"} {
		s.Register(op, Mgmt, nil)
	}
}

// DecodeStepDown decodes a leader step-down's optional body; nats-server
// reads only a JSON object or array, anything else is no body.
func DecodeStepDown(data []byte) (req api.LeaderStepDownRequest, aerr *api.ApiError) {
	b := bytes.TrimLeft(data, " \t\r\n")
	if len(b) == 0 || b[0] != '{' && b[0] != '[' {
		return req, nil
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return req, api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err)
	}
	return req, nil
}

// streamStepDown serves STREAM.LEADER.STEPDOWN.<stream>: the optional
// body's placement (preferred server, cluster, tags) picks where the
// leadership goes.
func (s *Server) streamStepDown(r *Request) {
	const typ = api.TypeStreamLeaderStepDown
	req, bodyErr := DecodeStepDown(r.Data)
	if aerr := s.ops.StepDownStream(StreamArg(r), req, bodyErr); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

// consumerStepDown serves CONSUMER.LEADER.STEPDOWN.<stream>.<consumer>: a
// consumer leads where its stream does, so the stream's leadership moves.
func (s *Server) consumerStepDown(r *Request) {
	const typ = api.TypeConsumerLeaderStepDown
	stream, consumer, ok := strings.Cut(r.Args, ".")
	if !ok || stream == "" || consumer == "" || strings.Contains(consumer, ".") {
		s.RespondError(r, typ, api.NewError(api.ErrBadRequest))
		return
	}
	req, bodyErr := DecodeStepDown(r.Data)
	if aerr := s.ops.StepDownConsumer(stream, consumer, req, bodyErr); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.LeaderStepDownResponse{Response: api.Response{Type: typ}, Success: true}, false)
}

// consumerPeerMove refuses CONSUMER.PEER.REMOVE and .EVACUATE
// <stream>.<consumer>: see registerCluster.
func (s *Server) consumerPeerMove(typ string, clustered bool, r *Request) {
	stream, consumer, ok := strings.Cut(r.Args, ".")
	switch {
	case !ok || stream == "" || consumer == "" || strings.Contains(consumer, "."):
		s.RespondError(r, typ, api.NewError(api.ErrBadRequest))
	case !clustered:
		s.RespondError(r, typ, api.NewError(api.ErrClusterRequired))
	default:
		s.RespondError(r, typ, api.Errorf(api.ErrBadRequest,
			"a consumer's replicas are its stream's in jetwal: move the stream's replica instead (stream peer-remove or evacuate)"))
	}
}

// streamRemovePeer serves STREAM.PEER.REMOVE.<stream> and
// STREAM.PEER.EVACUATE.<stream> {"peer": server}, answered with type typ.
func (s *Server) streamRemovePeer(typ string, r *Request) {
	var req api.StreamRemovePeerRequest
	if !s.decodeBody(r, typ, &req, bodyRequired) {
		return
	}
	if req.Peer == "" {
		s.RespondError(r, typ, api.NewError(api.ErrBadRequest))
		return
	}
	if aerr := s.ops.RemovePeer(StreamArg(r), req.Peer); aerr != nil {
		s.RespondError(r, typ, aerr)
		return
	}
	s.Respond(r, api.StreamRemovePeerResponse{Response: api.Response{Type: typ}, Success: true}, false)
}
