package api

// The error numbers of consumer reset and the flow control ack policy
// (nats-server 2.14, ADR-60), kept beside the rest of errTable in a file
// of their own.
const (
	ErrConsumerInvalidReset               ErrCode = 10204
	ErrConsumerAckFCRequiresPush          ErrCode = 10218
	ErrConsumerAckFCRequiresFC            ErrCode = 10219
	ErrConsumerAckFCRequiresMaxAckPending ErrCode = 10220
	ErrConsumerAckFCRequiresNoAckWait     ErrCode = 10221
	ErrConsumerAckFCRequiresNoMaxDeliver  ErrCode = 10222
)

// consumerOpsErrors are this file's part of errTable.
var consumerOpsErrors = map[ErrCode]errInfo{
	ErrConsumerInvalidReset:               {400, "invalid reset: {err}"},
	ErrConsumerAckFCRequiresPush:          {400, "flow control ack policy requires a push based consumer"},
	ErrConsumerAckFCRequiresFC:            {400, "flow control ack policy requires flow control"},
	ErrConsumerAckFCRequiresMaxAckPending: {400, "flow control ack policy requires max ack pending"},
	ErrConsumerAckFCRequiresNoAckWait:     {400, "flow control ack policy requires unset ack wait"},
	ErrConsumerAckFCRequiresNoMaxDeliver:  {400, "flow control ack policy requires unset max deliver"},
}
