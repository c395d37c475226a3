package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"
)

// TLS is the tls { } block (and the --tls* flags).
type TLS struct {
	CertFile, KeyFile, CAFile string
	Verify                    bool // require and verify client certificates
	VerifyAndMap              bool // Verify, and log the client in as the user its certificate names
	HandshakeFirst            bool
	Timeout                   time.Duration // 0 = the server's default (2s)
}

// Config loads the certificate files into a server TLS configuration.
func (t *TLS) Config() (*tls.Config, error) {
	if t.CertFile == "" || t.KeyFile == "" {
		return nil, fmt.Errorf("tls: cert_file and key_file are both required")
	}
	pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: loading certificate %s and key %s: %w", t.CertFile, t.KeyFile, err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls: ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: ca_file %s holds no PEM certificate", t.CAFile)
		}
		c.ClientCAs = pool
	}
	if t.Verify || t.VerifyAndMap {
		if c.ClientCAs == nil {
			return nil, fmt.Errorf("tls: verify needs ca_file to check client certificates against")
		}
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// tlsIgnored are tls { } fields of nats-server jetwal does not implement.
var tlsIgnored = map[string]bool{
	"insecure": true, "verify_cert_and_check_known_urls": true, "allow_insecure_cipher_suites": true,
	"cipher_suites": true, "curve_preferences": true, "connection_rate_limit": true, "pinned_certs": true,
	"cert_store": true, "cert_match_by": true, "cert_match": true, "ca_certs_match": true,
	"cert_match_skip_invalid": true, "ocsp_peer": true, "certs": true, "certificates": true, "min_version": true,
}

func (c *Config) applyTLS(name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	t := &TLS{}
	err = eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "cert_file":
			t.CertFile, err = c.path(n, v)
		case "key_file":
			t.KeyFile, err = c.path(n, v)
		case "ca_file":
			t.CAFile, err = c.path(n, v)
		case "verify":
			t.Verify, err = v.boolean(n)
		case "verify_and_map":
			t.VerifyAndMap, err = v.boolean(n)
		case "timeout":
			t.Timeout, err = v.duration(n)
		case "handshake_first", "first", "immediate":
			if s, ok := v.v.(string); ok {
				switch strings.ToLower(s) {
				case "true", "on":
					t.HandshakeFirst = true
				case "false", "off":
					t.HandshakeFirst = false
				default: // "auto" or a fallback delay
					t.HandshakeFirst = true
					c.warn(v, "%s: %q: no fallback to INFO first in jetwal; the handshake always comes first", n, s)
				}
				return nil
			}
			t.HandshakeFirst, err = v.boolean(n)
		default:
			if tlsIgnored[lower(k)] {
				c.warn(v, "field %q is not supported by jetwal; ignored", n)
			} else {
				err = v.errorf("%s: unknown tls field", n)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if t.CertFile == "" || t.KeyFile == "" {
		return v.errorf("%s: cert_file and key_file are both required", name)
	}
	if (t.Verify || t.VerifyAndMap) && t.CAFile == "" {
		return v.errorf("%s: verify needs ca_file", name)
	}
	if _, err := t.Config(); err != nil {
		return v.errorf("%s: %v", name, err)
	}
	c.TLS = t
	c.Auth.MapCerts = t.VerifyAndMap
	return nil
}

// path reads a file name; a relative one is taken from the directory of
// the file it appears in (nats-server takes it from the working
// directory; ours is the same when jetwal runs next to its config, and
// works from anywhere otherwise).
func (c *Config) path(name string, v value) (string, error) {
	s, err := v.str(name)
	if err != nil || s == "" {
		return s, err
	}
	if !strings.HasPrefix(s, "/") {
		if _, statErr := os.Stat(s); statErr != nil {
			s = dirOf(v.pos.file) + "/" + s
		}
	}
	return s, nil
}

func dirOf(file string) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[:i]
	}
	return "."
}
