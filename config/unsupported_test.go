package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/internal/testcert"
)

// sectionConf is a file with field (set to true) on line 3 inside
// section, and the field's full name as errors and warnings give it.
// ok is false for a section the test does not know yet.
func sectionConf(section, field string, certs *testcert.Set) (conf, full string, ok bool) {
	switch section {
	case secTop:
		return fmt.Sprintf("port: 4222\nhost: \"127.0.0.1\"\n%s: true\n", field), field, true
	case secJetStream:
		return fmt.Sprintf("port: 4222\njetstream {\n  %s: true\n}\n", field), "jetstream." + field, true
	case secCluster:
		return fmt.Sprintf("port: 4222\ncluster {\n  %s: true\n}\n", field), "cluster." + field, true
	case secClusterAuth:
		return fmt.Sprintf("cluster {\n authorization {\n  %s: true\n }\n}\n", field), "cluster.authorization." + field, true
	case secTLS:
		return fmt.Sprintf("tls {\n  cert_file: %q, key_file: %q\n  %s: true\n}\n", certs.ServerCert, certs.ServerKey, field),
			"tls." + field, true
	case secClusterTLS:
		return fmt.Sprintf("cluster {\n tls { cert_file: %q, key_file: %q\n  %s: true\n }\n}\n", certs.ServerCert, certs.ServerKey, field),
			"cluster.tls." + field, true
	case secAuth:
		return fmt.Sprintf("port: 4222\nauthorization {\n  %s: true\n}\n", field), "authorization." + field, true
	case secWebsocket:
		return fmt.Sprintf("websocket {\n  port: -1, no_tls: true\n  %s: true\n}\n", field), "websocket." + field, true
	case secWSTLS:
		return fmt.Sprintf("websocket {\n tls { cert_file: %q, key_file: %q\n  %s: true\n }\n port: -1\n}\n", certs.ServerCert, certs.ServerKey, field),
			"websocket.tls." + field, true
	case secUser:
		return fmt.Sprintf("authorization {\n users: [\n  {user: a, password: b, %s: true}\n ]\n}\n", field),
			"authorization.users[0]." + field, true
	}
	return "", "", false
}

// TestEveryUnsupportedFieldIsClassified walks the tables themselves (not
// a copy), so a field added to either is tested: a refused field stops
// Load with its position, its full name and the reason; an ignored one
// loads with one warning that names it and says why ignoring it is safe.
func TestEveryUnsupportedFieldIsClassified(t *testing.T) {
	certs := testcert.New(t)
	sections := map[string]bool{}
	for s := range refusedFields {
		sections[s] = true
	}
	for s := range ignoredFields {
		sections[s] = true
	}
	n := 0
	for section := range sections {
		for field, r := range refusedFields[section] {
			n++
			if _, both := ignoredFields[section][field]; both {
				t.Errorf("%s %q is both refused and ignored", section, field)
			}
			if field != strings.ToLower(field) || r.why == "" {
				t.Errorf("%s %q: names are lower case and every refusal has a reason", section, field)
			}
			conf, full, ok := sectionConf(section, field, certs)
			if !ok {
				t.Fatalf("section %q has no template in sectionConf", section)
			}
			path := write(t, "refused.conf", conf)
			_, err := Load(path)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("%s: refused field loaded (err %v)", full, err)
				continue
			}
			if ce.File != path || ce.Line != 3 || ce.Col == 0 || ce.Reason != full+": "+r.why ||
				!strings.HasPrefix(err.Error(), fmt.Sprintf("%s:3:%d: %s: ", path, ce.Col, full)) {
				t.Errorf("%s: got %q", full, err)
			}
		}
		for field, why := range ignoredFields[section] {
			n++
			if field != strings.ToLower(field) || why == "" {
				t.Errorf("%s %q: names are lower case and every ignored field has a reason", section, field)
			}
			conf, full, ok := sectionConf(section, field, certs)
			if !ok {
				t.Fatalf("section %q has no template in sectionConf", section)
			}
			path := write(t, "ignored.conf", conf)
			c, err := Load(path)
			if err != nil {
				t.Errorf("%s: ignored field refused: %v", full, err)
				continue
			}
			if len(c.Warnings) != 1 || c.Warnings[0].Line != 3 || c.Warnings[0].File != path ||
				c.Warnings[0].Message != fmt.Sprintf("field %q is not supported by jetwal (%s); ignored", full, why) {
				t.Errorf("%s: warnings %v", full, c.Warnings)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d fields walked", n)
	}
}

// TestDocListsIgnoredSettings: the "Ignored settings" section of doc.go
// names every field of ignoredFields, under its section.
func TestDocListsIgnoredSettings(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, doc, ok := strings.Cut(string(b), "# Ignored settings")
	if !ok {
		t.Fatal(`doc.go has no "# Ignored settings" section`)
	}
	doc, _, _ = strings.Cut(doc, "\n// #")
	// Each section's fields are on lines starting with "//   - section:";
	// the top level's with "//   - top level:".
	lines := map[string]string{}
	var cur string
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimPrefix(l, "//")
		if m := regexp.MustCompile(`^\s+- ([a-z. ]+):`).FindStringSubmatch(l); m != nil {
			cur = m[1]
		}
		if cur != "" {
			lines[cur] += l + "\n"
		}
	}
	for section, fields := range ignoredFields {
		name := section
		if name == secTop {
			name = "top level"
		}
		text, ok := lines[name]
		if !ok {
			t.Errorf("doc.go lists no section %q", name)
			continue
		}
		var missing []string
		for f := range fields {
			if !regexp.MustCompile(`(^|[^a-z_])` + regexp.QuoteMeta(f) + `($|[^a-z_])`).MatchString(text) {
				missing = append(missing, f)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("doc.go, section %s, does not name %v", name, missing)
		}
	}
}

// TestHarmlessValuesOfRefusedFields: a refused feature turned off is
// accepted; turned on it is refused.
func TestHarmlessValuesOfRefusedFields(t *testing.T) {
	for _, tc := range []struct {
		conf string
		want string // "" = loads
	}{
		{"authorization {\n proxy_required: false\n user: a, password: b\n}\n", ""},
		{"authorization {\n proxy_required: true\n user: a, password: b\n}\n", "authorization.proxy_required: connecting only through a trusted proxy"},
		{"authorization { users: [\n {user: a, password: b, proxy_required: false}\n] }\n", ""},
		{"authorization { users: [\n {user: a, password: b, allowed_connection_types: [\"STANDARD\", \"WEBSOCKET\"]}\n] }\n", ""},
		{"authorization { users: [\n {user: a, password: b, allowed_connection_types: []}\n] }\n", ""},
		{"authorization { users: [\n {user: a, password: b, allowed_connection_types: [\"WEBSOCKET\", \"MQTT\"]}\n] }\n", ""},
		{"accounts { A: { users: [\n {user: a, password: b, clients: [\"LEAFNODE\"]}\n] } }\n", ""},
		{"accounts { A: { users: [\n {user: a, password: b, clients: [\"TELNET\"]}\n] } }\n",
			"accounts.A.users[0].clients: unknown connection type \"TELNET\""},
		{"port: 1\nocsp: false\n", ""},
		{"port: 1\nocsp { mode: never }\n", ""},
		{"port: 1\nocsp { url: \"http://ocsp.example\", mode: NEVER }\n", ""},
		{"port: 1\nocsp { url: \"http://ocsp.example\" }\n", "ocsp: OCSP stapling"},
		{"port: 1\nocsp { mode: always }\n", "ocsp: OCSP stapling and the revocation check"},
	} {
		path := write(t, "h.conf", tc.conf)
		c, err := Load(path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.conf, err)
		case tc.want == "" && len(c.Warnings) != 0:
			t.Errorf("%q: warnings %v", tc.conf, c.Warnings)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path+":2:")):
			t.Errorf("%q: got %v, want %q on line 2", tc.conf, err, tc.want)
		}
	}
}

// TestJetStreamEncryption: every name nats-server takes for the key and
// the previous key is read, from the file or the environment; the cipher
// is checked; a TPM stops Load at the field; no error shows the key; an
// account's jetstream takes no key.
func TestJetStreamEncryption(t *testing.T) {
	const secret = "verysecretkey0123" // an environment value is parsed as a conf value: no leading digit
	for _, f := range []string{"key", "ek", "encryption_key"} {
		c := load(t, "js.conf", "jetstream {\n  "+f+": \""+secret+"\"\n  prev_ek: older\n  cipher: AES\n}\n")
		if e := c.JetStream.Encryption; e.Key != secret || e.PrevKey != "older" || e.Cipher != "aes" {
			t.Errorf("%s: %+v", f, e)
		}
	}
	t.Setenv("JETWAL_KEY", secret)
	c := load(t, "env.conf", "jetstream {\n  store_dir: /data\n  key: $JETWAL_KEY\n  prev_encryption_key: \"old\"\n}\n")
	if e := c.JetStream.Encryption; e.Key != secret || e.PrevKey != "old" || e.Cipher != "" {
		t.Errorf("key from the environment: %+v", e)
	}
	for _, tc := range []struct{ conf, want string }{
		{"jetstream {\n  key: " + secret + "\n  cipher: rot13\n}\n", `:3:3: jetstream.cipher: "rot13": want chachapoly or aes`},
		{"jetstream {\n  key: \"  \"\n}\n", ":2:3: jetstream.key: empty key"},
		{"jetstream {\n  cipher: aes\n}\n", "prev_key or cipher without a key"},
		{"jetstream {\n  prev_key: " + secret + "\n}\n", "prev_key or cipher without a key"},
		{"jetstream {\n  key: " + secret + "\n  tpm { keys_file: /x }\n}\n", ":3:3: jetstream.tpm: " + encryptionRefusal},
	} {
		path := write(t, "bad.conf", tc.conf)
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.conf, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%q: the error shows the key: %v", tc.conf, err)
		}
	}
	path := write(t, "acc.conf", "accounts {\n A: { jetstream: {\n  max_mem: 1G\n  encryption_key: $JETWAL_KEY\n } }\n}\n")
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+":4:") ||
		!strings.Contains(err.Error(), "accounts.A.jetstream.encryption_key: not supported") || strings.Contains(err.Error(), secret) {
		t.Errorf("account key: %v", err)
	}
}
