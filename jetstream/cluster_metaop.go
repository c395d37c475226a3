package jetstream

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
	"github.com/jetwal/jetwal/server"
)

// metaOpResponse is the answer of the meta leader's system-account
// operations (META.LEADER.STEPDOWN, SERVER.REMOVE): nats-server's
// response with a success flag.
type metaOpResponse struct {
	api.Response
	Success bool `json:"success,omitempty"`
}

// serveMetaOp answers subj in sys, the system account, while this server
// is the meta leader: a request with a reply runs op on its body, off the
// publisher's goroutine (op may wait for a commit or an election), after
// the Nats-Required-Api-Level check, and is answered with a response of
// type typ. A user of any other account gets no answer. It does nothing
// without a cluster (nats-server has no such subscription either).
func (js *JetStream) serveMetaOp(sys *server.Account, subj, typ string, op func(data []byte) *api.ApiError) (*server.Subscription, error) {
	if !js.clustered() || sys == nil {
		return nil, nil
	}
	return sys.Subscribe(subj, "", func(m *server.Msg) {
		if m.Reply == "" || !js.cl.c.IsMetaLeader() {
			return
		}
		hdr, data, reply := bytes.Clone(m.Header), bytes.Clone(m.Data), strings.Clone(m.Reply)
		go func() {
			var aerr *api.ApiError
			if len(hdr) > 0 && apiserver.LevelTooLow(hdr) {
				aerr = api.NewError(api.ErrRequiredApiLevel)
			} else {
				aerr = op(data)
			}
			b, err := json.Marshal(metaOpResponse{Response: api.Response{Type: typ, Error: aerr}, Success: aerr == nil})
			if err != nil {
				return
			}
			js.apiTotal.Add(1)
			if aerr != nil {
				js.apiErrors.Add(1)
			}
			sys.Publish(reply, "", nil, b)
		}()
	})
}

// SystemSubjects are the subjects the meta leader answers in the system
// account (serveMetaOp): a responder of that account's own, such as
// ServeDisabled's, must leave them alone.
func SystemSubjects() []string {
	return []string{metaStepDownSubject, serverRemoveSubject, serverEvacuateSubject}
}
