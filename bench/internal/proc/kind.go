package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Kind names a server implementation the harness knows how to start.
type Kind string

// The server implementations under comparison.
const (
	KindJetwal     Kind = "jetwal"
	KindNATSServer Kind = "nats-server"
)

// Mode selects how the server persists JetStream writes.
type Mode string

// The durability modes every workload is run in.
const (
	// ModeDefault runs each server with its own default settings
	// (jetwal: sync always; nats-server: fsync every 2 minutes).
	ModeDefault Mode = "default"
	// ModeSyncAlways makes both servers fsync before acknowledging a write.
	ModeSyncAlways Mode = "sync-always"
	// ModeEncrypted runs both servers with their default sync and
	// encryption at rest, the same key and cipher (jetstream { key,
	// cipher: chachapoly }). Not in Modes: -modes encrypted asks for it.
	ModeEncrypted Mode = "encrypted"
)

// benchKey is the key of ModeEncrypted (a benchmark's throw-away key).
const benchKey = "jetwal-bench-encryption-key-0123456789"

// Modes lists every Mode in report order.
var Modes = []Mode{ModeDefault, ModeSyncAlways}

// Spec describes one server under test.
type Spec struct {
	// Name labels the server in reports, e.g. "jetwal" or "nats-server".
	Name string
	// Kind decides the command line.
	Kind Kind
	// Path is the executable.
	Path string
}

// Validate reports whether the spec can be started.
func (s Spec) Validate() error {
	if s.Name == "" {
		return fmt.Errorf("proc: spec for %q has no name", s.Path)
	}
	switch s.Kind {
	case KindJetwal, KindNATSServer:
	default:
		return fmt.Errorf("proc: unknown server kind %q", s.Kind)
	}
	st, err := os.Stat(s.Path)
	if err != nil {
		return fmt.Errorf("proc: %s binary: %w", s.Name, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("proc: %s binary %s is not an executable file", s.Name, s.Path)
	}
	return nil
}

// args returns the command line (without the executable) for one start of
// the server. It may write a config file into confDir.
func (s Spec) args(mode Mode, port int, storeDir, confDir string) ([]string, error) {
	p := strconv.Itoa(port)
	switch s.Kind {
	case KindJetwal:
		a := []string{"serve", "-js", "-a", "127.0.0.1", "-p", p, "-sd", storeDir}
		if mode == ModeSyncAlways {
			a = append(a, "--sync", "always")
		}
		if mode == ModeEncrypted {
			conf, err := writeEncryptedConf(confDir, "jetwal.conf", storeDir)
			if err != nil {
				return nil, err
			}
			a = append(a, "-c", conf)
		}
		return a, nil
	case KindNATSServer:
		if mode == ModeEncrypted {
			conf, err := writeEncryptedConf(confDir, "nats-server.conf", storeDir)
			if err != nil {
				return nil, err
			}
			return []string{"-c", conf, "-a", "127.0.0.1", "-p", p}, nil
		}
		if mode == ModeSyncAlways {
			conf := filepath.Join(confDir, "nats-server.conf")
			body := fmt.Sprintf("jetstream {\n  store_dir: %q\n  sync_interval: always\n}\n", storeDir)
			if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
				return nil, fmt.Errorf("proc: write %s: %w", conf, err)
			}
			return []string{"-c", conf, "-a", "127.0.0.1", "-p", p}, nil
		}
		return []string{"-js", "-a", "127.0.0.1", "-p", p, "-sd", storeDir}, nil
	}
	return nil, fmt.Errorf("proc: unknown server kind %q", s.Kind)
}

// writeEncryptedConf writes ModeEncrypted's configuration file.
func writeEncryptedConf(confDir, name, storeDir string) (string, error) {
	conf := filepath.Join(confDir, name)
	body := fmt.Sprintf("jetstream {\n  store_dir: %q\n  key: %q\n  cipher: chachapoly\n}\n", storeDir, benchKey)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return "", fmt.Errorf("proc: write %s: %w", conf, err)
	}
	return conf, nil
}

// CommandLine renders the command used for mode with placeholder port and
// directory, for the report's reproduction notes.
func (s Spec) CommandLine(mode Mode) string {
	switch s.Kind {
	case KindJetwal:
		c := "jetwal serve -js -a 127.0.0.1 -p PORT -sd DIR"
		if mode == ModeSyncAlways {
			c += " --sync always"
		}
		if mode == ModeEncrypted {
			c += " -c CONF  # CONF: jetstream { store_dir: DIR, key: KEY, cipher: chachapoly }"
		}
		return c
	case KindNATSServer:
		if mode == ModeEncrypted {
			return "nats-server -c CONF -a 127.0.0.1 -p PORT  # CONF: jetstream { store_dir: DIR, key: KEY, cipher: chachapoly }"
		}
		if mode == ModeSyncAlways {
			return "nats-server -c CONF -a 127.0.0.1 -p PORT  # CONF: jetstream { store_dir: DIR, sync_interval: always }"
		}
		return "nats-server -js -a 127.0.0.1 -p PORT -sd DIR"
	}
	return string(s.Kind)
}
