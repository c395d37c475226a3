package jetstream

import (
	"encoding/json"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// ServeDisabled answers the JetStream API in an account without JetStream
// (on a server that has it) the way nats-server does: every request gets
// error 10039, "JetStream not enabled for account" ($JS.API.INFO in an
// account_info_response). The caller unsubscribes the returned
// subscription to stop.
func ServeDisabled(h Host) (*server.Subscription, error) {
	return h.Subscribe(api.Wildcard, "", func(m *server.Msg) {
		if m.Reply == "" {
			return
		}
		typ := api.TypeError
		if strings.TrimPrefix(m.Subject, api.Prefix) == "INFO" {
			typ = api.TypeAccountInfo
		}
		b, err := json.Marshal(api.Response{Type: typ, Error: api.NewError(api.ErrNotEnabledForAccount)})
		if err != nil {
			return
		}
		h.Publish(m.Reply, "", nil, b)
	})
}
