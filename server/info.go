package server

import (
	"crypto/tls"
	"encoding/json"
	"runtime"
	"strconv"
)

// The INFO line, field for field in nats-server's order (PROTOCOL.md §1.1):
//
//	INFO {"server_id":…,"server_name":…,"version":…,"proto":1,"go":…,
//	      "host":…,"port":…,"headers":true,["auth_required":true,]
//	      ["tls_required":true,["tls_verify":true,]["tls_available":true,]]
//	      "max_payload":…,
//	      ["jetstream":true,]"client_id":…,"client_ip":…,["nonce":…,]
//	      [connect_info,remote_account,[acc_is_sys,]]
//	      ["api_lvl":…]} \r\n
//
// A WebSocket client's INFO has the websocket listener's host and port,
// "tls_required" and "tls_available" with wss, and no connect_urls.
// Note the space before CRLF. The second INFO, sent after the PONG to the
// first PING following CONNECT, adds "connect_info":true and
// "remote_account" (the client's account) and, for a client of the system
// account, "acc_is_sys":true.

func jsonString(s string) string {
	b, _ := json.Marshal(s) // marshaling a string cannot fail
	return string(b)
}

// buildInfoPrefix renders the INFO fields that are the same for every
// client of the TCP listener.
func (s *Server) buildInfoPrefix(port int) string {
	tc := s.opts.TLSConfig
	return s.renderInfoPrefix(s.opts.Host, port, s.authenticator() != nil, tc != nil,
		tc != nil && tc.ClientAuth == tls.RequireAndVerifyClientCert, false)
}

// renderInfoPrefix renders the INFO fields that are the same for every
// client of one listener.
func (s *Server) renderInfoPrefix(host string, port int, authRequired, tlsRequired, tlsVerify, tlsAvailable bool) string {
	b := []byte(`INFO {"server_id":`)
	b = append(b, jsonString(s.id)...)
	b = append(b, `,"server_name":`...)
	b = append(b, jsonString(s.name)...)
	b = append(b, `,"version":`...)
	b = append(b, jsonString(s.opts.Version)...)
	b = append(b, `,"proto":1,"go":`...)
	b = append(b, jsonString(runtime.Version())...)
	b = append(b, `,"host":`...)
	b = append(b, jsonString(host)...)
	b = append(b, `,"port":`...)
	b = strconv.AppendInt(b, int64(port), 10)
	b = append(b, `,"headers":true`...)
	if authRequired {
		b = append(b, `,"auth_required":true`...)
	}
	if tlsRequired {
		b = append(b, `,"tls_required":true`...)
	}
	if tlsVerify {
		b = append(b, `,"tls_verify":true`...)
	}
	if tlsAvailable {
		b = append(b, `,"tls_available":true`...)
	}
	b = append(b, `,"max_payload":`...)
	b = strconv.AppendInt(b, int64(s.opts.MaxPayload), 10)
	if s.opts.JetStream {
		b = append(b, `,"jetstream":true`...)
	}
	return string(b)
}

// infoLine renders the INFO line for c.
func (s *Server) infoLine(c *client, connectInfo bool) string {
	prefix := ""
	p := s.infoPrefix.Load()
	if c.ws != nil {
		p = s.wsInfoPrefix.Load()
	}
	if p != nil {
		prefix = *p
	}
	b := make([]byte, 0, len(prefix)+128)
	b = append(b, prefix...)
	b = append(b, `,"client_id":`...)
	b = strconv.AppendUint(b, c.id, 10)
	b = append(b, `,"client_ip":`...)
	b = append(b, jsonString(c.ip)...)
	if c.nonce != "" {
		b = append(b, `,"nonce":`...)
		b = append(b, jsonString(c.nonce)...)
	}
	b = s.appendClusterInfo(b, c.ws != nil)
	if s.lameDuck.Load() {
		b = append(b, `,"ldm":true`...)
	}
	if connectInfo {
		acc := c.acc.Load()
		b = append(b, `,"connect_info":true,"remote_account":`...)
		b = append(b, jsonString(acc.name)...)
		if acc.system {
			b = append(b, `,"acc_is_sys":true`...)
		}
	}
	if s.opts.JetStream && s.opts.APILevel > 0 {
		b = append(b, `,"api_lvl":`...)
		b = strconv.AppendInt(b, int64(s.opts.APILevel), 10)
	}
	b = append(b, "} \r\n"...)
	return string(b)
}
