package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// TestAccountDetailsWithNatsCLI: with a system account configured, the
// CLI's commands that need account details (server report jetstream
// --account, server request jetstream/accounts/jetstream-health, account
// report statistics) work for the system user, and /accountz and /jsz
// show the accounts serve configured.
func TestAccountDetailsWithNatsCLI(t *testing.T) {
	conf := writeConf(t, fmt.Sprintf(`
listen: 127.0.0.1:0
server_name: detailed
jetstream { store_dir: %q }
authorization { users: [ {user: app, password: app} ] }
accounts { SYS: { users: [ {user: admin, password: adm} ] } }
system_account: SYS
`, filepath.Join(t.TempDir(), "store")))
	r := startServe(t, "-c", conf, "-m", "-1")
	m := monitorRE.FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatalf("no monitoring address in:\n%s", r.logs)
	}
	nc, err := nats.Connect("nats://"+r.addr, nats.UserInfo("app", "app"), nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, njs.StreamConfig{Name: "ORD", Subjects: []string{"ord.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := js.Publish(ctx, "ord.1", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateConsumer(ctx, njs.ConsumerConfig{Durable: "C1"}); err != nil {
		t.Fatal(err)
	}

	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get("http://" + m[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
	}
	var az struct {
		System   string   `json:"system_account"`
		Accounts []string `json:"accounts"`
	}
	get("/accountz", &az)
	if az.System != "SYS" || !reflect.DeepEqual(az.Accounts, []string{"SYS", "$G"}) {
		t.Errorf("accountz %+v", az)
	}
	var jz struct {
		Accounts []struct {
			Name    string `json:"name"`
			Streams []struct {
				Name      string `json:"name"`
				Consumers []struct {
					Name string `json:"name"`
				} `json:"consumer_detail"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	get("/jsz?acc=$G&consumers=true", &jz)
	if len(jz.Accounts) != 1 || len(jz.Accounts[0].Streams) != 1 || jz.Accounts[0].Streams[0].Name != "ORD" ||
		len(jz.Accounts[0].Streams[0].Consumers) != 1 || jz.Accounts[0].Streams[0].Consumers[0].Name != "C1" {
		t.Errorf("jsz?acc=$G %+v", jz)
	}

	cli := func(args ...string) string {
		t.Helper()
		out, err := runNatsCLI(t, r.addr, append([]string{"--user", "admin", "--password", "adm"}, args...)...)
		if err != nil {
			t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	// The account's own figures: 1 stream, 1 consumer, 2 messages.
	if out := cli("server", "report", "jetstream", "--account", "$G"); !strings.Contains(out, "JetStream Summary for Account $G") ||
		!row("detailed", "", "1", "1", "2").MatchString(out) {
		t.Errorf("server report jetstream --account:\n%s", out)
	}
	if out := cli("server", "report", "jetstream"); !row("detailed", "", "1", "1", "2").MatchString(out) {
		t.Errorf("server report jetstream:\n%s", out)
	}
	out := cli("server", "request", "jetstream", "--all")
	for _, want := range []string{`"account_details":[{"name":"$G"`, `"stream_detail":[{"name":"ORD"`, `"consumer_detail":[{"stream_name":"ORD","name":"C1"`} {
		if !strings.Contains(out, want) {
			t.Errorf("server request jetstream --all lacks %s:\n%s", want, out)
		}
	}
	if out := cli("server", "request", "accounts"); !strings.Contains(out, `"system_account":"SYS","accounts":["SYS","$G"]`) {
		t.Errorf("server request accounts:\n%s", out)
	}
	if out := cli("server", "request", "accounts", "--account", "SYS"); !strings.Contains(out, `"account_name":"SYS"`) || !strings.Contains(out, `"is_system":true`) {
		t.Errorf("server request accounts --account SYS:\n%s", out)
	}
	if out := cli("server", "request", "jetstream-health", "--account", "$G", "--stream", "ORD", "--consumer", "C1"); !strings.Contains(out, `"status":"ok","status_code":200`) {
		t.Errorf("server request jetstream-health:\n%s", out)
	}
	if out := cli("server", "request", "jetstream-health", "--account", "$G", "--stream", "NOPE"); !strings.Contains(out, `"status_code":404`) ||
		!strings.Contains(out, `"type":"STREAM"`) {
		t.Errorf("server request jetstream-health of a missing stream:\n%s", out)
	}
	// The app connection and the CLI's own are both in $G.
	if out := cli("account", "report", "statistics"); !strings.Contains(out, "Server Statistics") || !row("127.0.0.1", "").MatchString(out) {
		t.Errorf("account report statistics:\n%s", out)
	}
}
