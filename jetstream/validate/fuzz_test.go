package validate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// FuzzStreamConfig feeds arbitrary STREAM.CREATE bodies through decoding
// and the config check: no panic, and a config that passes passes again
// unchanged (normalizing is idempotent).
func FuzzStreamConfig(f *testing.F) {
	f.Add([]byte(`{"name":"python_articles","subjects":["hello.python"],"retention":"limits","max_consumers":-1,"max_msgs_per_subject":-1,"max_msgs":-1,"max_bytes":-1,"max_age":0,"max_msg_size":-1,"storage":"file","discard":"old","num_replicas":1,"duplicate_window":120000000000,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"allow_direct":true,"mirror_direct":false,"consumer_limits":{}}`))
	f.Add([]byte(`{"name":"KV_b","subjects":["$KV.b.>"],"max_msgs_per_subject":5,"discard":"new","allow_rollup_hdrs":true,"deny_delete":true,"allow_direct":true}`))
	f.Add([]byte(`{"name":"x","max_age":100000000,"duplicate_window":1,"first_seq":9,"metadata":{"a":"b"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req api.StreamCreateRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		cfg, aerr := Stream(&req.StreamConfig)
		if aerr != nil {
			if aerr.ErrCode == 0 || aerr.Description == "" {
				t.Fatalf("error without code or text: %+v", aerr)
			}
			return
		}
		again, aerr := Stream(&cfg)
		if aerr != nil {
			t.Fatalf("normalized config rejected: %v", aerr)
		}
		a, _ := json.Marshal(cfg)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("not idempotent:\n%s\n%s", a, b)
		}
	})
}
