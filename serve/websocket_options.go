package serve

import (
	"errors"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
)

// websocketOptions maps the file's websocket block to the listener's
// options. top is the authentication of the client listener (the file's,
// with the --user, --pass and --auth flags applied). WebSocket clients
// log in the same way, except as the block says, like nats-server: its
// authorization { user, password, token } and no_auth_user replace the
// top-level ones, and its tls { verify_and_map } replaces the client
// listener's. Only when that differs do they get an Authenticator of
// their own; otherwise they share the client listener's, reloads
// included.
func websocketOptions(w *config.Websocket, top auth.Options) (*server.WebsocketOptions, error) {
	o := &server.WebsocketOptions{
		Host:             w.Host,
		Port:             w.Port,
		NoTLS:            w.NoTLS,
		Compression:      w.Compression,
		SameOrigin:       w.SameOrigin,
		AllowedOrigins:   w.AllowedOrigins,
		Headers:          w.Headers,
		HandshakeTimeout: w.HandshakeTimeout,
		PingInterval:     w.PingInterval,
		AuthTimeout:      w.AuthTimeout,
	}
	if w.TLS != nil {
		tc, err := w.TLS.Config()
		if err != nil {
			return nil, err
		}
		o.TLSConfig = tc
	}
	wa := top
	wa.MapCerts = w.TLS != nil && w.TLS.VerifyAndMap
	if w.AuthOverride() {
		wa.Username, wa.Password, wa.Token, wa.NoAuthUser = w.Username, w.Password, w.Token, w.NoAuthUser
	}
	if top.MapCerts && !wa.MapCerts {
		// The users were declared to be matched by certificate, most
		// without a password: by password over the WebSocket they would
		// be open to anyone with an empty password.
		return nil, errors.New("websocket: the client listener logs clients in by certificate (tls { verify_and_map }), and the websocket block would let WebSocket clients log in as those users without one; refusing to start (give websocket { tls { verify: true, verify_and_map: true } })")
	}
	if !w.AuthOverride() && wa.MapCerts == top.MapCerts {
		return o, nil // the client listener's authentication
	}
	if !wa.Enabled() {
		return o, nil
	}
	a, err := auth.New(wa)
	if err != nil {
		return nil, err
	}
	o.Auth = a
	return o, nil
}
