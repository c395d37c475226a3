package api

import "fmt"

// Leader step-downs of clustered JetStream: the meta group's
// ($JS.API.META.LEADER.STEPDOWN, a system account request) and a
// consumer's ($JS.API.CONSUMER.LEADER.STEPDOWN.<stream>.<consumer>).

const (
	TypeStreamRemovePeer       = "io.nats.jetstream.api.v1.stream_remove_peer_response"
	TypeStreamEvacuatePeer     = "io.nats.jetstream.api.v1.stream_evacuate_peer_response"
	TypeMetaServerRemove       = "io.nats.jetstream.api.v1.meta_server_remove_response"
	TypeMetaServerEvacuate     = "io.nats.jetstream.api.v1.meta_server_evacuate_response"
	TypeMetaLeaderStepDown     = "io.nats.jetstream.api.v1.meta_leader_stepdown_response"
	TypeConsumerLeaderStepDown = "io.nats.jetstream.api.v1.consumer_leader_stepdown_response"
	TypeConsumerRemovePeer     = "io.nats.jetstream.api.v1.consumer_remove_peer_response"
	TypeConsumerEvacuatePeer   = "io.nats.jetstream.api.v1.consumer_evacuate_peer_response"
)

// LeaderStepDownRequest is the optional body of a step-down: where the
// leadership should go. A preferred server name takes precedence over a
// cluster name and tags.
type LeaderStepDownRequest struct {
	Placement *Placement `json:"placement,omitempty"`
}

// LeaderStepDownResponse answers a meta or consumer leader step-down.
type LeaderStepDownResponse struct {
	Response
	Success bool `json:"success,omitempty"`
}

// StreamRemovePeerRequest is the body of STREAM.PEER.REMOVE.<stream>:
// the server (its name) whose replica is to move elsewhere.
type StreamRemovePeerRequest struct {
	Peer string `json:"peer"`
}

// StreamRemovePeerResponse answers STREAM.PEER.REMOVE.
type StreamRemovePeerResponse struct {
	Response
	Success bool `json:"success,omitempty"`
}

// MetaServerRemoveRequest is the body of $JS.API.SERVER.REMOVE (a system
// account request): the server to take out of the meta group, by name,
// or by raft id (peer_id; jetwal's raft ids are route addresses).
type MetaServerRemoveRequest struct {
	Server string `json:"peer"`
	PeerID string `json:"peer_id,omitempty"`
}

// MetaServerRemoveResponse answers SERVER.REMOVE.
type MetaServerRemoveResponse struct {
	Response
	Success bool `json:"success,omitempty"`
}

// The error numbers of the step-downs and peer changes (nats-server's).
const (
	ErrClusterNoPeers         ErrCode = 10005
	ErrClusterNotAvail        ErrCode = 10008
	ErrClusterPeerNotMember   ErrCode = 10040
	ErrClusterServerNotMember ErrCode = 10044
	ErrPeerRemap              ErrCode = 10075
	// A consumer's num_replicas against its stream's.
	ErrConsumerReplicasExceedsStream ErrCode = 10126
	ErrConsumerReplicasMatchStream   ErrCode = 10134
	ErrRaftGeneral                   ErrCode = 10041
)

// clusterOpsErrors are this file's part of errTable (the default texts;
// the constructors below give the particular reason).
var clusterOpsErrors = map[ErrCode]errInfo{
	ErrClusterNoPeers:                {400, "no suitable peers for placement"},
	ErrClusterNotAvail:               {503, "JetStream system temporarily unavailable"},
	ErrClusterPeerNotMember:          {400, "peer not a member"},
	ErrClusterServerNotMember:        {400, "server is not a member of the cluster"},
	ErrPeerRemap:                     {503, "peer remap failed"},
	ErrConsumerReplicasExceedsStream: {400, "consumer config replica count exceeds parent stream"},
	ErrConsumerReplicasMatchStream:   {400, "consumer config replicas must match interest retention stream's replicas"},
	ErrRaftGeneral:                   {500, "raft error"},
}

// ClusterNoPeers is nats-server's 10005 (status 400): no server to move
// the leadership to, with why.
func ClusterNoPeers(err error) *ApiError {
	return &ApiError{Code: 400, ErrCode: ErrClusterNoPeers, Description: err.Error()}
}

// ClusterNotAvail is nats-server's 10008 (status 503): the group has no
// leader.
func ClusterNotAvail() *ApiError {
	return &ApiError{Code: 503, ErrCode: ErrClusterNotAvail, Description: "JetStream system temporarily unavailable"}
}

// RaftGeneral is nats-server's 10041 (status 500): raft refused.
func RaftGeneral(err error) *ApiError {
	return &ApiError{Code: 500, ErrCode: ErrRaftGeneral, Description: fmt.Sprint(err)}
}
