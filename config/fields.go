package config

import (
	"math"
	"strings"
)

// field maps one top-level setting.
type field struct {
	canonical string
	apply     func(c *Config, name string, v value) error
}

func lower(s string) string { return strings.ToLower(s) }

// topLevel lists the settings jetwal implements, under every name
// nats-server accepts for them.
var topLevel = func() map[string]field {
	m := make(map[string]field)
	add := func(f field, names ...string) {
		f.canonical = names[0]
		for _, n := range names {
			m[n] = f
		}
	}
	add(field{apply: func(c *Config, n string, v value) error {
		p, err := v.integer(n, RandomPort, 65535)
		c.Port = int(p)
		return err
	}}, "port")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.Host, err = v.str(n)
		return err
	}}, "host", "net")
	add(field{apply: func(c *Config, n string, v value) error {
		h, p, err := listen(v, n)
		if err != nil {
			return err
		}
		if h != "" {
			c.Host = h
			c.Set["host"] = true
		}
		c.Port = p
		c.Set["port"] = true
		return nil
	}}, "listen")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.ServerName, err = v.str(n)
		if err == nil && strings.ContainsAny(c.ServerName, " \t\r\n") {
			return v.errorf("%s: %q contains spaces", n, c.ServerName)
		}
		return err
	}}, "server_name")
	add(field{apply: func(c *Config, n string, v value) error {
		tags, err := v.strings(n)
		c.Tags = NormalizeTags(tags)
		return err
	}}, "server_tags")
	add(field{apply: func(c *Config, n string, v value) error {
		s, err := v.size(n)
		if err == nil && (s == 0 || s > 64<<20) {
			return v.errorf("%s: %d: want 1 byte to 64MB", n, s)
		}
		c.MaxPayload = s
		return err
	}}, "max_payload")
	add(field{apply: func(c *Config, n string, v value) error {
		x, err := v.integer(n, 1, math.MaxInt32)
		c.MaxConnections = int(x)
		return err
	}}, "max_connections", "max_conn")
	add(field{apply: func(c *Config, n string, v value) error {
		s, err := v.size(n)
		if err == nil && (s == 0 || s > math.MaxInt32) {
			return v.errorf("%s: %d out of range", n, s)
		}
		c.MaxControlLine = int(s)
		return err
	}}, "max_control_line")
	add(field{apply: func(c *Config, n string, v value) error {
		s, err := v.size(n)
		if err == nil && s == 0 {
			return v.errorf("%s: must be positive", n)
		}
		c.MaxPending = s
		return err
	}}, "max_pending")
	add(field{apply: func(c *Config, n string, v value) error {
		d, err := v.duration(n)
		if err == nil && d == 0 {
			return v.errorf("%s: must be positive", n)
		}
		c.PingInterval = d
		return err
	}}, "ping_interval")
	add(field{apply: func(c *Config, n string, v value) error {
		x, err := v.integer(n, 1, math.MaxInt32)
		c.MaxPingsOut = int(x)
		return err
	}}, "ping_max")
	add(field{apply: func(c *Config, n string, v value) error {
		d, err := v.duration(n)
		if err == nil && d == 0 {
			return v.errorf("%s: must be positive", n)
		}
		c.WriteDeadline = d
		return err
	}}, "write_deadline")
	add(field{apply: (*Config).applyJetStream}, "jetstream")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.JetStream.StoreDir, err = v.str(n)
		return err
	}}, "store_dir", "storedir")
	add(field{apply: (*Config).applyAuthorization}, "authorization")
	add(field{apply: (*Config).applyAccounts}, "accounts")
	add(field{apply: (*Config).applySystemAccount}, "system_account", "system")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.Auth.NoAuthUser, err = v.str(n)
		return err
	}}, "no_auth_user")
	add(field{apply: (*Config).applyTLS}, "tls")
	add(field{apply: (*Config).applyCluster}, "cluster")
	add(field{apply: (*Config).applyWebsocket}, "websocket", "ws")
	add(field{apply: func(c *Config, n string, v value) error {
		h, p, err := listen(v, n)
		if err != nil {
			return err
		}
		if h != "" {
			c.HTTPHost = h
		}
		c.HTTPPort = p
		return nil
	}}, "http")
	add(field{apply: func(c *Config, n string, v value) error {
		p, err := v.integer(n, RandomPort, 65535)
		c.HTTPPort = int(p)
		c.Set["http"] = true
		return err
	}}, "http_port", "monitor_port")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.HTTPHost, err = v.str(n)
		return err
	}}, "http_host")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.PortsFileDir, err = c.path(n, v)
		return err
	}}, "ports_file_dir")
	add(field{apply: func(c *Config, n string, v value) error {
		d, err := v.duration(n)
		if err == nil && d <= 0 {
			return v.errorf("%s: must be positive", n)
		}
		c.LameDuckDuration = d
		return err
	}}, "lame_duck_duration")
	add(field{apply: func(c *Config, n string, v value) error {
		d, err := v.duration(n)
		if err == nil && d < 0 {
			return v.errorf("%s: must not be negative", n)
		}
		c.LameDuckGrace = d
		return err
	}}, "lame_duck_grace_period")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.Debug, err = v.boolean(n)
		return err
	}}, "debug")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.Trace, err = v.boolean(n)
		return err
	}}, "trace")
	add(field{apply: func(c *Config, n string, v value) error {
		var err error
		c.LogFile, err = v.str(n)
		return err
	}}, "logfile", "log_file")
	return m
}()
