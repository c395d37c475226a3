package fuzz

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// jsAPISubjects are the $JS.API operations FuzzJetStreamAPI drives. Stream
// F always exists (a create that removed it is redone); G comes and goes.
// CONSUMER.MSG.NEXT is left out: a pull request may rightly stay unanswered
// until it expires.
var jsAPISubjects = []string{
	"$JS.API.INFO",
	"$JS.API.STREAM.CREATE.F", "$JS.API.STREAM.CREATE.G",
	"$JS.API.STREAM.UPDATE.F", "$JS.API.STREAM.UPDATE.G",
	"$JS.API.STREAM.INFO.F", "$JS.API.STREAM.INFO.G",
	"$JS.API.STREAM.DELETE.G",
	"$JS.API.STREAM.PURGE.F",
	"$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST",
	"$JS.API.STREAM.MSG.GET.F", "$JS.API.STREAM.MSG.DELETE.F",
	"$JS.API.DIRECT.GET.F",
	"$JS.API.CONSUMER.CREATE.F", "$JS.API.CONSUMER.CREATE.F.C",
	"$JS.API.CONSUMER.DURABLE.CREATE.F.D",
	"$JS.API.CONSUMER.INFO.F.C", "$JS.API.CONSUMER.DELETE.F.C",
	"$JS.API.CONSUMER.NAMES.F", "$JS.API.CONSUMER.LIST.F",
	"$JS.API.NOPE", "$JS.API.STREAM.FROB.F", // unknown operations are answered too
}

// apiServer is one in-process server with JetStream, shared by every input
// of a fuzzing process.
var apiServer struct {
	once sync.Once
	srv  *server.Server
	err  error
}

func jsServer(t *testing.T) *server.Server {
	apiServer.once.Do(func() {
		dir, err := os.MkdirTemp("", "jetwal-fuzz-jsapi-")
		if err != nil {
			apiServer.err = err
			return
		}
		srv, err := server.New(server.Options{Host: "127.0.0.1", Port: 0, JetStream: true, APILevel: api.Level})
		if err == nil {
			err = srv.Start()
		}
		if err != nil {
			apiServer.err = err
			return
		}
		if _, err := jetstream.New(srv, jetstream.Config{StoreDir: dir, Sync: wal.SyncNever}); err != nil {
			apiServer.err = err
			return
		}
		apiServer.srv = srv
	})
	if apiServer.err != nil {
		t.Fatal(apiServer.err)
	}
	return apiServer.srv
}

// request publishes body to subj in process and waits for the answer.
func request(t *testing.T, srv *server.Server, subj string, body []byte) (hdr, data []byte, ok bool) {
	return requestWait(t, srv, subj, body, 20*time.Second)
}

func requestWait(t *testing.T, srv *server.Server, subj string, body []byte, wait time.Duration) (hdr, data []byte, ok bool) {
	inbox := "_INBOX.fuzz." + subj
	ch := make(chan [2][]byte, 1)
	sub, err := srv.Subscribe(inbox, "", func(m *server.Msg) {
		select {
		case ch <- [2][]byte{append([]byte(nil), m.Header...), append([]byte(nil), m.Data...)}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	srv.Publish(subj, inbox, nil, body)
	select {
	case r := <-ch:
		return r[0], r[1], true
	case <-time.After(wait):
		return nil, nil, false
	}
}

// FuzzJetStreamAPI sends arbitrary bodies to each $JS.API subject: every
// request is answered, with an error JSON (a code and a description) or a
// valid response (JSON with its type; DIRECT.GET: a message or a status
// header, a 503 no-responders status when the stream does not allow direct
// gets, as with nats-server), and the server keeps serving.
func FuzzJetStreamAPI(f *testing.F) {
	f.Add(uint8(1), []byte(`{"name":"F","subjects":["f.>"],"storage":"file"}`))
	f.Add(uint8(2), []byte(`{"name":"G","subjects":["g.>"],"storage":"memory","max_msgs":10}`))
	f.Add(uint8(3), []byte(`{"name":"F","subjects":["f.>","h"],"max_age":1000000000}`))
	f.Add(uint8(8), []byte(``))
	f.Add(uint8(9), []byte(`{"filter":"f.a","keep":1}`))
	f.Add(uint8(10), []byte(`{"offset":0,"subject":"f.>"}`))
	f.Add(uint8(12), []byte(`{"seq":1}`))
	f.Add(uint8(13), []byte(`{"seq":1,"no_erase":true}`))
	f.Add(uint8(14), []byte(`{"last_by_subj":"f.a"}`))
	f.Add(uint8(15), []byte(`{"stream_name":"F","config":{"durable_name":"C","ack_policy":"explicit"}}`))
	f.Add(uint8(16), []byte(`{"stream_name":"F","config":{"name":"C","deliver_policy":"by_start_sequence","opt_start_seq":3}}`))
	f.Add(uint8(17), []byte(`{"stream_name":"F","config":{"durable_name":"D","filter_subjects":["f.a","f.b"]}}`))
	// One valid request of every kind (the index into jsAPISubjects), then
	// the hostile ones that found bugs.
	f.Add(uint8(0), []byte(``))
	f.Add(uint8(4), []byte(`{"name":"G","subjects":["g.>"],"max_msgs":5}`))
	f.Add(uint8(5), []byte(``))
	f.Add(uint8(6), []byte(`{"subjects_filter":">","offset":1}`))
	f.Add(uint8(7), []byte(``))
	f.Add(uint8(11), []byte(`{"offset":0}`))
	f.Add(uint8(18), []byte(``))
	f.Add(uint8(19), []byte(``))
	f.Add(uint8(20), []byte(`{"offset":1}`))
	f.Add(uint8(21), []byte(`{"offset":0}`))
	f.Add(uint8(22), []byte(`{}`))
	f.Add(uint8(19), []byte(`{"offset":9223372036854775000}`))
	f.Add(uint8(20), []byte(`{"offset":9223372036854775807}`))
	f.Add(uint8(10), []byte(`{"offset":-9223372036854775808}`))
	f.Add(uint8(8), []byte(`{"seq":18446744073709551615,"keep":18446744073709551615}`))
	f.Add(uint8(13), []byte(`{"seq":`))
	f.Add(uint8(15), []byte(`{"stream_name":"F","config":{"durable_name":"H","ack_wait":9223372036854775807,"max_ack_pending":-9223372036854775808,"backoff":[9223372036854775807]}}`))
	f.Add(uint8(2), []byte(`{"name":"G","subjects":["g.>"],"max_bytes":9223372036854775807,"max_age":9223372036854775807,"duplicate_window":9223372036854775807}`))
	f.Add(uint8(0), []byte(`{"not":"json"`))
	f.Add(uint8(4), []byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		srv := jsServer(t)
		ensureStreamF(t, srv)
		subj := jsAPISubjects[int(op)%len(jsAPISubjects)]
		if subj == "$JS.API.DIRECT.GET.F" && !allowDirect(t, srv) {
			// Like nats-server, a stream without allow_direct has no
			// DIRECT.GET responder: the requester gets a 503 status.
			hdr, data, ok := request(t, srv, subj, body)
			if !ok || !strings.HasPrefix(string(hdr), "NATS/1.0 503\r\n") || len(data) != 0 {
				t.Fatalf("%s %q without allow_direct: %q %q, want a 503 status", subj, body, hdr, data)
			}
			subj = "$JS.API.STREAM.MSG.GET.F"
		}
		hdr, data, ok := request(t, srv, subj, body)
		if !ok {
			t.Fatalf("%s %q: no answer", subj, body)
		}
		checkAnswer(t, subj, body, hdr, data)
		if _, info, ok := request(t, srv, "$JS.API.INFO", nil); !ok || !json.Valid(info) {
			t.Fatalf("server stopped serving after %s %q", subj, body)
		}
	})
}

func allowDirect(t *testing.T, srv *server.Server) bool {
	_, data, _ := request(t, srv, "$JS.API.STREAM.INFO.F", nil)
	var r struct {
		Config struct {
			AllowDirect bool `json:"allow_direct"`
		} `json:"config"`
	}
	json.Unmarshal(data, &r)
	return r.Config.AllowDirect
}

func ensureStreamF(t *testing.T, srv *server.Server) {
	_, data, ok := request(t, srv, "$JS.API.STREAM.INFO.F", nil)
	if ok && !json.Valid(data) {
		t.Fatalf("STREAM.INFO answered %q", data)
	}
	var r struct {
		Error json.RawMessage `json:"error"`
	}
	json.Unmarshal(data, &r)
	if len(r.Error) == 0 || string(r.Error) == "null" {
		return
	}
	request(t, srv, "$JS.API.STREAM.CREATE.F", []byte(`{"name":"F","subjects":["f.>"],"allow_direct":true}`))
	for i := 0; i < 3; i++ {
		srv.Publish("f.a", "", nil, []byte("x"))
	}
}

func checkAnswer(t *testing.T, subj string, body, hdr, data []byte) {
	if subj == "$JS.API.DIRECT.GET.F" && len(hdr) > 0 {
		return // a message, or a status such as NATS/1.0 404
	}
	var r struct {
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s %q: answer is not a JSON object: %q", subj, body, data)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		var e struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal(r.Error, &e); err != nil || e.Code == 0 || e.Description == "" {
			t.Fatalf("%s %q: malformed error %s", subj, body, r.Error)
		}
		return
	}
	if r.Type == "" {
		t.Fatalf("%s %q: response without a type: %s", subj, body, data)
	}
}
