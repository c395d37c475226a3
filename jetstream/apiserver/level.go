package apiserver

import (
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/natshdr"
)

// Requests that need a newer API level. A client sends the level its
// request needs in the Nats-Required-Api-Level header (the nats CLI does so
// for every request); like nats-server, jetwal refuses a request needing a
// level above api.Level, or naming no number, with 412 (10185), and a
// DIRECT.GET or CONSUMER.MSG.NEXT with a "412 Required Api Level" status
// (jetstream sends that one). A message of an atomic or fast batch carrying
// the header is refused the same way (jetstream's batch.go,
// fastbatch_publish.go) and the header is not stored; a plain publish
// stores it, as nats-server does.

// HdrRequiredLevel is the request header naming the API level a request
// needs.
const HdrRequiredLevel = "Nats-Required-Api-Level"

// responseTypes is the response type of each JSON API operation, for
// refusals made before the operation's handler runs.
var responseTypes = map[string]string{
	"INFO":                    api.TypeAccountInfo,
	"STREAM.CREATE":           api.TypeStreamCreate,
	"STREAM.UPDATE":           api.TypeStreamUpdate,
	"STREAM.INFO":             api.TypeStreamInfo,
	"STREAM.DELETE":           api.TypeStreamDelete,
	"STREAM.PURGE":            api.TypeStreamPurge,
	"STREAM.NAMES":            api.TypeStreamNames,
	"STREAM.LIST":             api.TypeStreamList,
	"STREAM.MSG.GET":          api.TypeMsgGet,
	"STREAM.MSG.DELETE":       api.TypeMsgDelete,
	"CONSUMER.CREATE":         api.TypeConsumerCreate,
	"CONSUMER.DURABLE.CREATE": api.TypeConsumerCreate,
	"CONSUMER.INFO":           api.TypeConsumerInfo,
	"CONSUMER.DELETE":         api.TypeConsumerDelete,
	"CONSUMER.NAMES":          api.TypeConsumerNames,
	"CONSUMER.LIST":           api.TypeConsumerList,
	"CONSUMER.PAUSE":          api.TypeConsumerPause,
	"CONSUMER.UNPIN":          api.TypeConsumerUnpin,
	"STREAM.SNAPSHOT":         api.TypeStreamSnapshot,
	"STREAM.RESTORE":          api.TypeStreamRestore,
	"CONSUMER.RESET":          api.TypeConsumerReset,
}

// LevelTooLow reports whether a request's header asks for an API level
// jetwal does not have.
func LevelTooLow(hdr []byte) bool {
	v := natshdr.Get(hdr, HdrRequiredLevel)
	if v == nil {
		return false
	}
	n, err := strconv.Atoi(string(v))
	return err != nil || n > api.Level
}

// refuseLevel answers a JSON API request that needs a newer API level and
// reports whether it did. DIRECT.GET checks for itself.
func (s *Server) refuseLevel(r *Request) bool {
	if len(r.Hdr) == 0 || !LevelTooLow(r.Hdr) {
		return false
	}
	op := strings.TrimPrefix(r.Subject, api.Prefix)
	if r.Args != "" {
		op = strings.TrimSuffix(op, "."+r.Args)
	}
	typ, ok := responseTypes[op]
	if !ok {
		return false
	}
	resp := api.Response{Type: typ, Error: api.NewError(api.ErrRequiredApiLevel)}
	switch op {
	case "CONSUMER.PAUSE": // nats-server's responses carry their fields
		s.Respond(r, api.ConsumerPauseResponse{Response: resp}, true)
	case "STREAM.RESTORE":
		s.Respond(r, api.StreamRestoreResponse{Response: resp}, true)
	default:
		s.Respond(r, resp, true)
	}
	return true
}
