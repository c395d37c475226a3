package serve

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/jetwal/jetwal/server/auth"
)

// TestWebsocketAuthFromFile: WebSocket clients log in like TCP clients
// unless the websocket block overrides it; its no_auth_user and users
// limited by connection type behave as in nats-server; a block that would
// let WebSocket clients in without the certificate the client listener
// requires is refused.
func TestWebsocketAuthFromFile(t *testing.T) {
	base := `
port: -1
authorization { users: [ {user: a, password: pa}, {user: w, password: pw, allowed_connection_types: ["WEBSOCKET"]} ] }
`
	o, err := ParseCommandLine([]string{"-c", writeConf(t, base+"websocket { port: -1, no_tls: true }\n")}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.Websocket == nil || o.Server.Websocket.Auth != nil || o.Server.Auth == nil {
		t.Fatalf("no override: websocket %+v, want the client listener's authenticator", o.Server.Websocket)
	}
	// The user limited to WEBSOCKET cannot log in on the client port.
	if _, err := o.Server.Auth.Authenticate(auth.Credentials{User: "w", Password: "pw"}); err == nil {
		t.Fatal("a WEBSOCKET-only user logged in on the client port")
	}
	if _, err := o.Server.Auth.Authenticate(auth.Credentials{User: "w", Password: "pw", ConnectionType: auth.ConnWebsocket}); err != nil {
		t.Fatal(err)
	}

	o, err = ParseCommandLine([]string{"-c", writeConf(t, base+"websocket { port: -1, no_tls: true, no_auth_user: w }\n")}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	wa := o.Server.Websocket.Auth
	if wa == nil {
		t.Fatal("websocket no_auth_user: no authenticator of its own")
	}
	if id, err := wa.Authenticate(auth.Credentials{ConnectionType: auth.ConnWebsocket}); err != nil || id.User != "w" {
		t.Fatalf("anonymous ws client = %+v, %v; want user w", id, err)
	}
	if _, err := o.Server.Auth.Authenticate(auth.Credentials{}); err == nil {
		t.Fatal("the websocket no_auth_user applies to the client port")
	}

	certs := testcert.New(t)
	mapped := fmt.Sprintf(`
port: -1
tls { cert_file: %q, key_file: %q, ca_file: %q, verify_and_map: true }
websocket { port: -1, no_tls: true }
`, certs.ServerCert, certs.ServerKey, certs.CAFile)
	_, err = ParseCommandLine([]string{"-c", writeConf(t, mapped)}, testVersion, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "without one; refusing to start") {
		t.Fatalf("certificate-only client port with a plain websocket listener: %v, want a refusal", err)
	}
	// The same with users matched by certificate (no passwords), and
	// with a websocket authorization override: still refused.
	for _, extra := range []string{
		`authorization { users: [ {user: "client@test"} ] }`,
		`authorization { users: [ {user: "client@test"} ] }` + "\nwebsocket { port: -1, no_tls: true, no_auth_user: \"client@test\" }",
	} {
		_, err = ParseCommandLine([]string{"-c", writeConf(t, mapped+extra+"\n")}, testVersion, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "refusing to start") {
			t.Fatalf("%s: %v, want a refusal", extra, err)
		}
	}
	// With the websocket listener mapping certificates too, it starts, and
	// the WebSocket clients log in by certificate only.
	wsMapped := fmt.Sprintf(`
port: -1
tls { cert_file: %q, key_file: %q, ca_file: %q, verify_and_map: true }
authorization { users: [ {user: "client@test"} ] }
websocket { port: -1, tls { cert_file: %q, key_file: %q, ca_file: %q, verify_and_map: true } }
`, certs.ServerCert, certs.ServerKey, certs.CAFile, certs.ServerCert, certs.ServerKey, certs.CAFile)
	o, err = ParseCommandLine([]string{"-c", writeConf(t, wsMapped)}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.Websocket.Auth != nil {
		t.Fatal("same authentication on both listeners, yet a websocket authenticator of its own")
	}
	if _, err := o.Server.Auth.Authenticate(auth.Credentials{User: "client@test", ConnectionType: auth.ConnWebsocket}); err == nil {
		t.Fatal("a certificate-mapped user logged in without a certificate")
	}
}
