// Command goclient holds the nats.go (jetstream package) client programs of
// the compat suite: `goclient FEATURE` runs one against the server named by
// NATS_URL and prints its normalized JSON result on one line; `goclient
// -list` prints the feature names.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// feature is one client program: it gets a connection and a JetStream
// context and returns a JSON-able result.
type feature func(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) (any, error)

var features = map[string]feature{
	"go_publish":  goPublish,
	"go_pull":     goPull,
	"go_kv":       goKV,
	"go_objstore": goObjstore,
	"go_msgtrace": goMsgTrace,
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-list" {
		names := make([]string, 0, len(features))
		for n := range features {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Println(n)
		}
		return
	}
	if len(os.Args) != 2 || features[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: goclient -list | goclient FEATURE (NATS_URL names the server)")
		os.Exit(2)
	}
	fmt.Println(runFeature(features[os.Args[1]]))
}

// runFeature connects, runs f and returns its normalized result; an error
// becomes {"uncaught": ...} as in the node programs.
func runFeature(f feature) string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var result any
	nc, err := nats.Connect(os.Getenv("NATS_URL"), nats.Timeout(5*time.Second))
	if err == nil {
		defer nc.Close()
		var js jetstream.JetStream
		if js, err = jetstream.New(nc); err == nil {
			result, err = f(ctx, nc, js)
		}
	}
	if err != nil {
		result = map[string]any{"uncaught": errView(err)}
	}
	return normalize(result)
}

// errView describes an error as a client can branch on it.
func errView(err error) map[string]any {
	out := map[string]any{"message": err.Error()}
	var apiErr *jetstream.APIError
	if asAPIError(err, &apiErr) {
		out["code"] = apiErr.Code
		out["err_code"] = int(apiErr.ErrorCode)
		out["description"] = apiErr.Description
	}
	return out
}

// Fields that change from run to run or from server to server.
var volatile = map[string]bool{
	"created": true, "ts": true, "time": true, "timestamp": true, "first_ts": true,
	"last_ts": true, "mtime": true, "server_id": true, "server_name": true,
	"cluster": true, "version": true, "nuid": true, "_nats.ver": true,
	"last_active": true, "delivered_at": true,
}

// normalize renders v as JSON without the volatile fields, keys sorted.
func normalize(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf(`{"uncaught":{"message":%q}}`, "encode result: "+err.Error())
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return fmt.Sprintf(`{"uncaught":{"message":%q}}`, "decode result: "+err.Error())
	}
	out, _ := json.Marshal(strip(generic))
	return string(out)
}

func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if volatile[k] {
				delete(x, k)
				continue
			}
			x[k] = strip(e)
		}
	case []any:
		for i := range x {
			x[i] = strip(x[i])
		}
	}
	return v
}
