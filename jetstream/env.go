package jetstream

import (
	"encoding/json"
	"log/slog"
)

// env is what a stream and its consumers take from the JetStream that
// holds them for their own work: the account's host (subscribe, publish,
// interest), the settings it was started with, the logger, and the events
// (advisories) published through the host. It is a value they read, not a
// way back into the manager: what a stream still asks of the manager (the
// stream table, account limits, the consumer manager, the cluster glue) is
// the real cycle doc.go describes. JetStream embeds it, so js.srv, js.cfg
// and js.log are env's.
type env struct {
	srv Host
	cfg Config // read-only once New returns
	log *slog.Logger
}

// listening reports whether anyone subscribes to the literal subject subj.
func (e *env) listening(subj string) bool { return e.srv.HasInterest(subj) }

// publishEvent encodes ev and publishes it on subj.
func (e *env) publishEvent(subj string, ev any) {
	b, err := json.Marshal(ev)
	if err != nil {
		e.log.Error("encoding advisory", "subject", subj, "error", err)
		return
	}
	e.srv.Publish(subj, "", nil, b)
}
