package websocket

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Origins is the origin policy of a listener (websocket { same_origin,
// allowed_origins }), checked against a request's Origin header (or
// Sec-WebSocket-Origin). A request without one is accepted: only browsers
// send it, and any other client could send whatever it likes (RFC 6455
// §10.2), so the check protects browser users from other sites' pages,
// not the server from clients. Authentication is what keeps clients out.
type Origins struct {
	same    bool                // the origin must be the request's own scheme, host and port
	allowed map[string][]origin // by lower-case host; nil = any origin
}

type origin struct{ scheme, port string }

// NewOrigins checks the allowed origins (absolute http or https URLs, as
// nats-server requires) and compiles the policy. It returns nil when there
// is nothing to check.
func NewOrigins(sameOrigin bool, allowed []string) (*Origins, error) {
	if !sameOrigin && len(allowed) == 0 {
		return nil, nil
	}
	o := &Origins{same: sameOrigin}
	for _, a := range allowed {
		u, err := url.ParseRequestURI(a)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: %v", a, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("allowed origin %q: must be an absolute http or https URL", a)
		}
		if u.Host == "" {
			return nil, fmt.Errorf("allowed origin %q: no host", a)
		}
		h, p, err := hostPort(u.Scheme == "https", u.Host)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: %v", a, err)
		}
		if o.allowed == nil {
			o.allowed = make(map[string][]origin)
		}
		o.allowed[h] = append(o.allowed[h], origin{scheme: u.Scheme, port: p})
	}
	return o, nil
}

// check reports why the request's origin is not allowed, or nil.
func (o *Origins) check(r *http.Request, secure bool) error {
	if o == nil {
		return nil
	}
	org := r.Header.Get("Origin")
	if org == "" {
		org = r.Header.Get("Sec-Websocket-Origin")
	}
	if org == "" {
		return nil
	}
	u, err := url.ParseRequestURI(org)
	if err != nil {
		return err
	}
	oh, op, err := hostPort(u.Scheme == "https", u.Host)
	if err != nil {
		return err
	}
	if o.same {
		rh, rp, err := hostPort(secure, r.Host)
		if err != nil {
			return err
		}
		scheme := "http"
		if secure {
			scheme = "https"
		}
		if oh != rh || op != rp || !strings.EqualFold(u.Scheme, scheme) {
			return errors.New("not same origin")
		}
	}
	if o.allowed != nil {
		for _, a := range o.allowed[oh] {
			if a.scheme == u.Scheme && a.port == op {
				return nil
			}
		}
		return errors.New("not in the allowed list")
	}
	return nil
}

// hostPort splits host[:port], defaulting the port by the scheme.
func hostPort(secure bool, hp string) (string, string, error) {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		var ae *net.AddrError
		if !errors.As(err, &ae) || !strings.Contains(ae.Err, "missing port") {
			return "", "", err
		}
		host, port = hp, "80"
		if secure {
			port = "443"
		}
	}
	return strings.ToLower(host), port, nil
}
