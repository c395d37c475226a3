package jetstream

import (
	"fmt"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// A JetStream domain (Config.Domain) names this server's JetStream for
// clients that reach it through a domain: nats.go's jetstream.NewWithDomain
// and `nats --js-domain` send their requests to $JS.<domain>.API.<op>. Those
// are served as $JS.API.<op>; the plain prefix keeps working, as on
// nats-server.

// ValidDomain reports whether d can name a domain: one subject token of
// ASCII letters, digits, '-' and '_', at most 255 bytes.
func ValidDomain(d string) bool {
	if d == "" || len(d) > 255 {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// subscribeDomain serves the domain's API prefix.
func (js *JetStream) subscribeDomain() error {
	if js.cfg.Domain == "" {
		return nil
	}
	prefix := "$JS." + js.cfg.Domain + ".API."
	next := api.Prefix + nextOp + "."
	sub, err := js.srv.Subscribe(prefix+">", "", func(m *server.Msg) {
		mm := *m
		mm.Subject = api.Prefix + m.Subject[len(prefix):]
		if strings.HasPrefix(mm.Subject, next) {
			js.cons.handleNext(&mm)
			return
		}
		js.handleAPI(&mm)
	})
	if err != nil {
		return fmt.Errorf("jetstream: subscribe %s>: %w", prefix, err)
	}
	js.mu.Lock()
	js.domainSub = sub
	js.mu.Unlock()
	return nil
}
