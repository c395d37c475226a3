package serve

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFromConfig: a flag given replaces the file's setting, one not given
// keeps it; without a file the flags' values (defaults included) stand;
// the file's and the flags' cluster settings combine; a bad file is an
// error naming it.
func TestFromConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "s.conf")
	if err := os.WriteFile(conf, []byte(`
port: 5000
max_payload: 2MB
ping_interval: "1m"
debug: true
jetstream { store_dir: "`+filepath.Join(dir, "js")+`" }
cluster { name: C, listen: "127.0.0.1:6000" }
`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := Flags{Port: 7000, Host: "127.0.0.1", MaxPayload: 1 << 20, PingInterval: 2 * time.Minute, StoreDir: "/default",
		ClusterName: "D", Given: map[string]bool{"port": true, "cluster_name": true}}
	o, err := FromConfig(conf, f)
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.Port != 7000 || o.Server.MaxPayload != 2<<20 || o.Server.PingInterval != time.Minute || !o.Server.Debug ||
		o.Store.Dir != filepath.Join(dir, "js") || o.ConfigFile != conf {
		t.Fatalf("merged: port %d max_payload %d ping %v debug %v store %q file %q", o.Server.Port, o.Server.MaxPayload,
			o.Server.PingInterval, o.Server.Debug, o.Store.Dir, o.ConfigFile)
	}
	if c := o.Server.Cluster; c == nil || c.Name != "D" || c.Port != 6000 {
		t.Fatalf("cluster %+v", c)
	}
	f.Given = map[string]bool{"port": true}
	o, err = FromConfig("", f)
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.Port != 7000 || o.Server.MaxPayload != 1<<20 || o.Server.PingInterval != 2*time.Minute || o.Store.Dir != "/default" {
		t.Fatalf("flags only: %+v", o.Server)
	}
	if _, err := FromConfig("", Flags{Given: map[string]bool{"cluster_name": true}}); err == nil {
		t.Fatal("--cluster_name without a cluster accepted")
	}
	if _, err := FromConfig("", Flags{TLSCert: "x.pem", Given: map[string]bool{"tlscert": true}}); err == nil {
		t.Fatal("--tlscert without --tls accepted")
	}
	if _, err := FromConfig(filepath.Join(dir, "missing.conf"), f); err == nil {
		t.Fatal("a missing file accepted")
	}
}
