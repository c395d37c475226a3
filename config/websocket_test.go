package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/testcert"
)

func TestWebsocketBlock(t *testing.T) {
	certs := testcert.New(t)
	path := write(t, "ws.conf", fmt.Sprintf(`
authorization { users: [ {user: a, password: b, allowed_connection_types: ["websocket"]} ] }
websocket {
  listen: "127.0.0.1:-1"
  tls { cert_file: %q, key_file: %q, ca_file: %q, verify_and_map: true }
  compression: true
  same_origin: true
  allowed_origins: ["https://app.example", "http://localhost:8080"]
  handshake_timeout: "3s"
  ping_interval: "30s"
  headers { X-Frame-Options: DENY }
  no_auth_user: a
  authorization { timeout: 5 }
}
`, certs.ServerCert, certs.ServerKey, certs.CAFile))
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Websocket
	if w == nil || w.Host != "127.0.0.1" || w.Port != RandomPort || w.TLS == nil || !w.TLS.VerifyAndMap || !w.Compression ||
		!w.SameOrigin || len(w.AllowedOrigins) != 2 || w.HandshakeTimeout != 3*time.Second || w.PingInterval != 30*time.Second ||
		len(w.Headers) != 1 || w.Headers[0] != [2]string{"X-Frame-Options", "DENY"} || w.NoAuthUser != "a" || !w.AuthOverride() ||
		w.AuthTimeout != 5*time.Second {
		t.Fatalf("websocket = %+v", w)
	}
	if c.Auth.MapCerts {
		t.Fatal("the websocket tls verify_and_map leaked into the client listener's")
	}
	if got := c.Auth.Users[0].ConnectionTypes; len(got) != 1 || got[0] != "WEBSOCKET" {
		t.Fatalf("connection types %v", got)
	}
	if len(c.Warnings) != 0 {
		t.Fatalf("warnings %v", c.Warnings)
	}
}

func TestWebsocketBlockRefusals(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{"websocket {\n port: -1\n}\n", "websocket: websocket requires TLS configuration"},
		{"websocket {\n port: -1, no_tls: false\n}\n", "websocket requires TLS configuration"},
		{"websocket {\n port: -1, no_tls: true\n jwt_cookie: jwt\n}\n", "websocket.jwt_cookie: JWT authentication is not built into jetwal"},
		{"websocket {\n port: -1, no_tls: true\n user_cookie: u\n}\n", "websocket.user_cookie: logging in with cookies"},
		{"websocket {\n port: -1, no_tls: true\n portt: 1\n}\n", "websocket.portt: unknown field"},
		{"websocket {\n port: -1, no_tls: true\n allowed_origins: [\"ftp://x\"]\n}\n", "allowed origins must be absolute http or https URLs"},
		{"websocket {\n port: -1, no_tls: true\n headers { Connection: close }\n}\n", "header \"Connection\" not allowed"},
		{"websocket {\n port: -1, no_tls: true\n authorization { users: [] }\n}\n", "websocket.authorization.users: not a websocket authorization field"},
		{"authorization { users: [ {user: a, password: b} ] }\nwebsocket {\n port: -1, no_tls: true, authorization { user: x, password: y }\n}\n",
			"websocket authentication username not compatible with presence of users/nkeys"},
		{"authorization { users: [ {user: a, password: b} ] }\nwebsocket {\n port: -1, no_tls: true, no_auth_user: zz\n}\n",
			"websocket.no_auth_user \"zz\": not in the users list"},
	} {
		path := write(t, "bad.conf", tc.conf)
		_, err := Load(path)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || ce.Line == 0 {
			t.Errorf("%q: got %v, want %q at a line", tc.conf, err, tc.want)
		}
	}
}

func TestWebsocketBlockWithoutPort(t *testing.T) {
	c, err := Load(write(t, "np.conf", "websocket {\n no_tls: true\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Websocket != nil || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Message, "no websocket listener") {
		t.Fatalf("websocket %+v, warnings %v", c.Websocket, c.Warnings)
	}
}
