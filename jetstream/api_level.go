package jetstream

import (
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Requests that need a newer API level. A client sends the level its
// request needs in the Nats-Required-Api-Level header (the nats CLI does so
// for every request); like nats-server, jetwal refuses a request needing a
// level above api.Level, or naming no number, with 412 (10185), and a
// DIRECT.GET or CONSUMER.MSG.NEXT with a "412 Required Api Level" status.
// A message of an atomic or fast batch carrying the header is refused the
// same way (batch.go, fastbatch_publish.go) and the header is not stored;
// a plain publish stores it, as nats-server does.

// hdrRequiredLevel is the request header naming the API level a request needs.
const hdrRequiredLevel = "Nats-Required-Api-Level"

var hdrLevelTooLow = statusHeader(412, "Required Api Level")

// apiResponseTypes is the response type of each JSON API operation, for
// refusals made before the operation's handler runs.
var apiResponseTypes = map[string]string{
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

// levelTooLow reports whether a request's header asks for an API level
// jetwal does not have.
func levelTooLow(hdr []byte) bool {
	v := headerValue(hdr, hdrRequiredLevel)
	if v == nil {
		return false
	}
	n, err := strconv.Atoi(string(v))
	return err != nil || n > api.Level
}

// refuseLevel answers a JSON API request that needs a newer API level and
// reports whether it did. DIRECT.GET checks for itself (apiDirectGet).
func (js *JetStream) refuseLevel(r *apiRequest) bool {
	if len(r.hdr) == 0 || !levelTooLow(r.hdr) {
		return false
	}
	op := strings.TrimPrefix(r.subject, api.Prefix)
	if r.args != "" {
		op = strings.TrimSuffix(op, "."+r.args)
	}
	typ, ok := apiResponseTypes[op]
	if !ok {
		return false
	}
	resp := api.Response{Type: typ, Error: api.NewError(api.ErrRequiredApiLevel)}
	switch op {
	case "CONSUMER.PAUSE": // nats-server's responses carry their fields
		js.respond(r, api.ConsumerPauseResponse{Response: resp}, true)
	case "STREAM.RESTORE":
		js.respond(r, api.StreamRestoreResponse{Response: resp}, true)
	default:
		js.respond(r, resp, true)
	}
	return true
}
