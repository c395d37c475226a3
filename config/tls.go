package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

// TLS is a tls { } block: the client listener's (Config.TLS, and the
// --tls* flags) or the routes' (Cluster.TLS).
type TLS struct {
	CertFile, KeyFile, CAFile string
	Verify                    bool // require and verify the peer's certificate
	VerifyAndMap              bool // Verify, and log the client in as the user its certificate names
	HandshakeFirst            bool
	Timeout                   time.Duration // 0 = the server's default (2s)
	MinVersion                uint16        // min_version; 0 = TLS 1.2
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
	c := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: max(t.MinVersion, tls.VersionTLS12)}
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

// RouteConfig is Config for routes, where both sides present the
// certificate: the accepting side verifies the remote's as Verify says,
// the connecting side verifies the remote's against ca_file (RootCAs), or
// the system's roots without one.
func (t *TLS) RouteConfig() (*tls.Config, error) {
	c, err := t.Config()
	if err != nil {
		return nil, err
	}
	c.RootCAs = c.ClientCAs
	return c, nil
}

func (c *Config) applyTLS(name string, v value) error {
	t, err := c.parseTLS(secTLS, name, v)
	if err != nil {
		return err
	}
	c.TLS = t
	c.Auth.MapCerts = t.VerifyAndMap
	return nil
}

// parseTLS reads a tls { } block of section (secTLS or secClusterTLS) and
// checks that its files load. Fields jetwal does not implement are refused
// or ignored as the tables of unsupported.go say; unknown ones are errors,
// as in nats-server.
func (c *Config) parseTLS(section, name string, v value) (*TLS, error) {
	m, err := v.block(name)
	if err != nil {
		return nil, err
	}
	t := &TLS{}
	files := map[string]value{} // where each file was named
	err = eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		if known, err := c.unsupported(section, k, n, v); known {
			return err
		}
		var err error
		switch lower(k) {
		case "cert_file":
			t.CertFile, err = c.path(n, v)
			files["cert_file"] = v
		case "key_file":
			t.KeyFile, err = c.path(n, v)
			files["key_file"] = v
		case "ca_file":
			t.CAFile, err = c.path(n, v)
			files["ca_file"] = v
		case "verify":
			t.Verify, err = v.boolean(n)
		case "verify_and_map":
			t.VerifyAndMap, err = v.boolean(n)
		case "timeout":
			t.Timeout, err = v.duration(n)
		case "min_version":
			t.MinVersion, err = minVersion(n, v)
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
			err = v.errorf("%s: unknown tls field", n)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if t.CertFile == "" || t.KeyFile == "" {
		return nil, v.errorf("%s: cert_file and key_file are both required", name)
	}
	if (t.Verify || t.VerifyAndMap) && t.CAFile == "" {
		return nil, v.errorf("%s: verify needs ca_file", name)
	}
	for _, f := range []struct{ field, what, path string }{
		{"cert_file", "certificate", t.CertFile}, {"key_file", "key", t.KeyFile}, {"ca_file", "CA certificates", t.CAFile},
	} {
		if f.path == "" {
			continue
		}
		if err := readable(f.path); err != nil {
			return nil, files[f.field].errorf("%s.%s: loading %s %s: %v", name, f.field, f.what, f.path, err)
		}
	}
	if _, err := t.Config(); err != nil {
		return nil, v.errorf("%s: %v", name, err)
	}
	return t, nil
}

// readable checks that a file can be opened for reading; the error leaves
// out the path, which the caller names with the setting.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	return f.Close()
}

// minVersion reads min_version: "1.2" or "1.3" (nats-server refuses older
// versions too).
func minVersion(name string, v value) (uint16, error) {
	s, err := v.str(name)
	if err != nil {
		return 0, err
	}
	switch strings.TrimSpace(s) {
	case "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	case "1.0", "1.1":
		return 0, v.errorf("%s: TLS %s is not supported; the lowest is 1.2", name, s)
	}
	return 0, v.errorf("%s: %q is not a TLS version (\"1.2\" or \"1.3\")", name, s)
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
