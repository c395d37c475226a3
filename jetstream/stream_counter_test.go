package jetstream

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

type counterAck struct {
	Stream string        `json:"stream"`
	Seq    uint64        `json:"seq"`
	Val    string        `json:"val"`
	Error  *api.ApiError `json:"error"`
}

func incr(t *testing.T, nc *nats.Conn, subj, by string, data string, extra ...string) counterAck {
	t.Helper()
	m := nats.NewMsg(subj)
	if by != "" {
		m.Header.Set("Nats-Incr", by)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m.Header.Set(extra[i], extra[i+1])
	}
	m.Data = []byte(data)
	r, err := nc.RequestMsg(m, 5*time.Second)
	if err != nil {
		t.Fatalf("publish %s %s: %v", subj, by, err)
	}
	var a counterAck
	if err := json.Unmarshal(r.Data, &a); err != nil {
		t.Fatalf("puback %q: %v", r.Data, err)
	}
	return a
}

// TestMessageCounters: Nats-Incr adds to the subject's last value, the
// stored body is {"val":…}, the PubAck carries the value; nats-server's
// errors for misuse; deletes and restarts keep the arithmetic right; and
// concurrent increments all count.
func TestMessageCounters(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var resp api.StreamCreateResponse
	requestJSON(t, nc, api.Prefix+"STREAM.CREATE.CNT", `{"name":"CNT","subjects":["cnt.>"],"allow_msg_counter":true}`, &resp)
	if resp.Error != nil || resp.Config.Metadata[api.MetaRequiredLevel] != "2" {
		t.Fatalf("create: %+v %v", resp.Error, resp.StreamInfo)
	}
	for _, c := range []struct{ cfg, want string }{
		{`"discard":"new"`, "counter stream cannot use discard new"},
		{`"allow_msg_ttl":true`, "counter stream cannot use message TTLs"},
		{`"retention":"workqueue"`, "counter stream can only use limits retention"},
	} {
		var r api.StreamCreateResponse
		requestJSON(t, nc, api.Prefix+"STREAM.CREATE.BAD", `{"name":"BAD","subjects":["bad"],"allow_msg_counter":true,`+c.cfg+`}`, &r)
		if r.Error == nil || r.Error.ErrCode != api.ErrStreamInvalidConfig || r.Error.Description != c.want {
			t.Fatalf("%s: %+v", c.cfg, r.Error)
		}
	}
	var up api.StreamCreateResponse
	requestJSON(t, nc, api.Prefix+"STREAM.UPDATE.CNT", `{"name":"CNT","subjects":["cnt.>"]}`, &up)
	if up.Error == nil || up.Error.Description != "stream configuration update can not change message counter setting" {
		t.Fatalf("update turning counters off: %+v", up.Error)
	}

	steps := []struct{ subj, by, want string }{
		{"cnt.a", "+5", "5"}, {"cnt.a", "-2", "3"}, {"cnt.b", "10", "10"},
		{"cnt.a", "100000000000000000000000", "100000000000000000000003"},
	}
	for i, s := range steps {
		a := incr(t, nc, s.subj, s.by, "")
		if a.Error != nil || a.Val != s.want || a.Seq != uint64(i+1) || a.Stream != "CNT" {
			t.Fatalf("%s %s: %+v, want %s", s.subj, s.by, a, s.want)
		}
	}
	js, _ := njs.New(nc)
	st, _ := js.Stream(ctxT(t), "CNT")
	m, err := st.GetMsg(ctxT(t), 2)
	if err != nil || string(m.Data) != `{"val":"3"}` || m.Header.Get("Nats-Incr") != "-2" {
		t.Fatalf("stored message: %q %v %v", m.Data, m.Header, err)
	}
	for _, c := range []struct {
		subj, by, data string
		extra          []string
		code           api.ErrCode
	}{
		{"cnt.a", "", "", nil, api.ErrMessageIncrMissing},
		{"cnt.a", "1", "payload", nil, api.ErrMessageIncrPayload},
		{"cnt.a", "one", "", nil, api.ErrMessageIncrInvalid},
		{"cnt.a", "1", "", []string{"Nats-Expected-Last-Sequence", "4"}, api.ErrMessageIncrInvalid},
		{"cnt.a", "1", "", []string{"Nats-Rollup", "sub"}, api.ErrMessageIncrInvalid},
	} {
		if a := incr(t, nc, c.subj, c.by, c.data, c.extra...); a.Error == nil || a.Error.ErrCode != c.code {
			t.Fatalf("%+v: %+v, want %d", c, a.Error, c.code)
		}
	}
	// Deleting the newest message of a subject goes back to the one before.
	if err := st.DeleteMsg(ctxT(t), 4); err != nil {
		t.Fatal(err)
	}
	if a := incr(t, nc, "cnt.a", "1", ""); a.Val != "4" {
		t.Fatalf("after deleting the last: %+v, want 4", a)
	}
	// A plain stream refuses increments.
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "PLAIN", Subjects: []string{"plain"}}); err != nil {
		t.Fatal(err)
	}
	if a := incr(t, nc, "plain", "1", ""); a.Error == nil || a.Error.ErrCode != api.ErrMessageIncrDisabled {
		t.Fatalf("increment on a plain stream: %+v", a.Error)
	}

	// Concurrent increments, many in flight at once, all count.
	const workers, each = 4, 100
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ts.connect()
			cjs, _ := njs.New(c)
			var fs []njs.PubAckFuture
			for range each {
				msg := nats.NewMsg("cnt.c")
				msg.Header.Set("Nats-Incr", "1")
				f, err := cjs.PublishMsgAsync(msg)
				if err != nil {
					t.Errorf("worker %d: %v", w, err)
					return
				}
				fs = append(fs, f)
			}
			for _, f := range fs {
				select {
				case <-f.Ok():
				case err := <-f.Err():
					t.Errorf("worker %d: %v", w, err)
				case <-time.After(30 * time.Second):
					t.Errorf("worker %d: no PubAck", w)
				}
			}
		}()
	}
	wg.Wait()
	if a := incr(t, nc, "cnt.c", "0", ""); a.Val != fmt.Sprint(workers*each) {
		t.Fatalf("after %d concurrent increments: %+v", workers*each, a)
	}

	// The value survives a restart.
	ts = ts.restart()
	nc = ts.connect()
	if a := incr(t, nc, "cnt.b", "-11", ""); a.Val != "-1" {
		t.Fatalf("after restart: %+v, want -1", a)
	}
}
