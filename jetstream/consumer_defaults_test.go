package jetstream

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestConsumerDefaultsAsNatsServer: the configuration a consumer is
// created with, for requests that leave fields out, is the one nats-server
// v2.15.2 answers with (each want below is its answer to the same request,
// with name, created and metadata left out): max_ack_pending 1000 only
// with acks, max_waiting 512 only for pull consumers, inactive_threshold 5s
// only for ephemerals, ack_wait taken from the first backoff.
func TestConsumerDefaultsAsNatsServer(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var created map[string]any
	requestJSON(t, nc, "$JS.API.STREAM.CREATE.M", `{"name":"M","subjects":["m.>"]}`, &created)
	if created["error"] != nil {
		t.Fatalf("stream create: %v", created["error"])
	}
	cases := []struct{ name, config, want string }{
		{"D1", `{"durable_name":"D1","ack_policy":"explicit"}`,
			`{"ack_policy":"explicit","ack_wait":30000000000,"deliver_policy":"all","max_ack_pending":1000,"max_deliver":-1,"max_waiting":512,"num_replicas":0,"replay_policy":"instant"}`},
		{"", `{}`,
			`{"ack_policy":"none","deliver_policy":"all","inactive_threshold":5000000000,"max_deliver":-1,"max_waiting":512,"num_replicas":0,"replay_policy":"instant"}`},
		{"D4", `{"durable_name":"D4","ack_policy":"none"}`,
			`{"ack_policy":"none","deliver_policy":"all","max_deliver":-1,"max_waiting":512,"num_replicas":0,"replay_policy":"instant"}`},
		{"D7", `{"name":"D7","deliver_subject":"x.y"}`,
			`{"ack_policy":"none","deliver_policy":"all","deliver_subject":"x.y","inactive_threshold":5000000000,"max_deliver":-1,"num_replicas":0,"replay_policy":"instant"}`},
		{"D8", `{"name":"D8","deliver_subject":"x.z","ack_policy":"all","flow_control":true,"idle_heartbeat":1000000000}`,
			`{"ack_policy":"all","ack_wait":30000000000,"deliver_policy":"all","deliver_subject":"x.z","flow_control":true,"idle_heartbeat":1000000000,"inactive_threshold":5000000000,"max_ack_pending":1000,"max_deliver":-1,"num_replicas":0,"replay_policy":"instant"}`},
		{"D9", `{"name":"D9","ack_policy":"explicit","max_batch":0,"max_expires":0,"max_bytes":0}`,
			`{"ack_policy":"explicit","ack_wait":30000000000,"deliver_policy":"all","inactive_threshold":5000000000,"max_ack_pending":1000,"max_deliver":-1,"max_waiting":512,"num_replicas":0,"replay_policy":"instant"}`},
		{"D10", `{"name":"D10","ack_policy":"explicit","max_deliver":0,"backoff":[1000000000,2000000000]}`,
			`{"ack_policy":"explicit","ack_wait":1000000000,"backoff":[1000000000,2000000000],"deliver_policy":"all","inactive_threshold":5000000000,"max_ack_pending":1000,"max_deliver":-1,"max_waiting":512,"num_replicas":0,"replay_policy":"instant"}`},
		{"D12", `{"name":"D12","ack_policy":"explicit","mem_storage":true,"num_replicas":1}`,
			`{"ack_policy":"explicit","ack_wait":30000000000,"deliver_policy":"all","inactive_threshold":5000000000,"max_ack_pending":1000,"max_deliver":-1,"max_waiting":512,"mem_storage":true,"num_replicas":1,"replay_policy":"instant"}`},
	}
	for _, c := range cases {
		subj := "$JS.API.CONSUMER.CREATE.M"
		if c.name != "" {
			subj += "." + c.name
		}
		var resp struct {
			Error  any            `json:"error"`
			Config map[string]any `json:"config"`
		}
		requestJSON(t, nc, subj, `{"stream_name":"M","config":`+c.config+`}`, &resp)
		if resp.Error != nil {
			t.Errorf("%s: %v", c.config, resp.Error)
			continue
		}
		for _, k := range []string{"name", "durable_name", "created", "metadata"} {
			delete(resp.Config, k)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(resp.Config, want) {
			got, _ := json.Marshal(resp.Config)
			t.Errorf("%s:\n got %s\nwant %s", c.config, got, c.want)
		}
	}
}
