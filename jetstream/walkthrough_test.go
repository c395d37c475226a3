package jetstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
)

const walkStream = "python_articles"

var walkBodies = []string{
	"Introduction to Python", "Python Data Types", "Python Functions and Modules",
	"Object-Oriented Python", "Python File Handling",
}

// TestWalkthroughWire replays the walkthrough's API traffic with the CLI's
// captured request bodies and checks every response against nats-server's
// captured one: the same fields in the same order, and the values the
// walkthrough depends on.
func TestWalkthroughWire(t *testing.T) {
	for _, st := range storages {
		t.Run(st.name, func(t *testing.T) {
			ts := startServer(t, fastSync())
			nc := ts.connect()

			// 01 account info.
			got := request(t, nc, api.SubjAccountInfo, "").Data
			sameShape(t, "account info", got, capturedBody(t, "resp", "01-", api.SubjAccountInfo))

			// 02 stream add, with the CLI's exact request.
			req := capturedBody(t, "req", "02-", api.SubjStreamCreate)
			if st.typ == api.MemoryStorage {
				req = bytes.Replace(req, []byte(`"storage":"file"`), []byte(`"storage":"memory"`), 1)
			}
			got = request(t, nc, api.SubjStreamCreate+walkStream, string(req)).Data
			want := capturedBody(t, "resp", "02-", api.SubjStreamCreate+walkStream)
			sameShape(t, "stream create", got, want)
			var created api.StreamCreateResponse
			json.Unmarshal(got, &created)
			if !created.DidCreate || created.Error != nil {
				t.Fatalf("create: %s", got)
			}
			// The config must be nats-server's, up to the version string,
			// the API level and the storage we chose.
			var wantResp api.StreamCreateResponse
			json.Unmarshal(want, &wantResp)
			wantResp.Config.Storage = st.typ
			wantResp.Config.Metadata[api.MetaServerVersion] = ts.srv.Version()
			wantResp.Config.Metadata[api.MetaServerLevel] = strconv.Itoa(api.Level) // the capture's server is at level 5
			gc, _ := json.Marshal(created.Config)
			wc, _ := json.Marshal(wantResp.Config)
			if !bytes.Equal(gc, wc) {
				t.Errorf("create config\n got %s\nwant %s", gc, wc)
			}

			// Creating it again with the same config succeeds without did_create.
			again := request(t, nc, api.SubjStreamCreate+walkStream, string(req)).Data
			if bytes.Contains(again, []byte("did_create")) || bytes.Contains(again, []byte(`"error"`)) {
				t.Errorf("idempotent create: %s", again)
			}

			// 04 stream ls, 05 stream info.
			got = request(t, nc, api.SubjStreamList, `{"offset":0}`).Data
			sameShape(t, "stream list", got, capturedBody(t, "resp", "04-", api.SubjStreamList))
			got = request(t, nc, api.SubjStreamInfo+walkStream, "").Data
			sameShape(t, "stream info", got, capturedBody(t, "resp", "05-", api.SubjStreamInfo))
			if !bytes.Contains(got, []byte(`"cluster":{"leader":"`+ts.srv.Name()+`"}`)) {
				t.Errorf("info without leader: %s", got)
			}

			// 06-10 five plain publishes, no reply subject.
			for _, b := range walkBodies {
				if err := nc.Publish("hello.python", []byte(b)); err != nil {
					t.Fatal(err)
				}
			}
			nc.Flush()
			var info api.StreamInfoResponse
			eventually(t, "5 messages", func() bool {
				requestJSON(t, nc, api.SubjStreamInfo+walkStream, "", &info)
				return info.State.Msgs == 5
			})
			got = request(t, nc, api.SubjStreamInfo+walkStream, "").Data
			sameShape(t, "stream info with messages", got, capturedBody(t, "resp", "12-", api.SubjStreamInfo))
			json.Unmarshal(got, &info)
			if info.State.FirstSeq != 1 || info.State.LastSeq != 5 || info.State.NumSubjects != 1 || info.State.Bytes == 0 {
				t.Errorf("state after 5 publishes: %+v", info.State)
			}

			// 12 stream get 2.
			got = request(t, nc, api.SubjMsgGet+walkStream, `{"seq":2}`).Data
			sameShape(t, "msg get", got, capturedBody(t, "resp", "12-", api.SubjMsgGet))
			var mg api.MsgGetResponse
			json.Unmarshal(got, &mg)
			if mg.Message == nil || string(mg.Message.Data) != walkBodies[1] || mg.Message.Subject != "hello.python" || mg.Message.Sequence != 2 {
				t.Fatalf("msg get 2: %s", got)
			}

			// X1 pub -J, X2 a Nats-Msg-Id twice.
			ack := request(t, nc, "hello.python", "Python Generators").Data
			if string(ack) != `{"stream":"python_articles","seq":6}` {
				t.Errorf("puback %s", ack)
			}
			msg := nats.NewMsg("hello.python")
			msg.Header.Set("Nats-Msg-Id", "article-9")
			msg.Data = []byte("Python Context Managers")
			for i, want := range []string{
				`{"stream":"python_articles","seq":7}`,
				`{"stream":"python_articles","seq":7,"duplicate": true}`,
				`{"stream":"python_articles","seq":7,"duplicate": true}`,
			} {
				r, err := nc.RequestMsg(msg, 5e9)
				if err != nil {
					t.Fatal(err)
				}
				if string(r.Data) != want {
					t.Errorf("msg-id publish %d: %s, want %s", i, r.Data, want)
				}
			}

			// X4 msg get with headers, and a missing one.
			got = request(t, nc, api.SubjMsgGet+walkStream, `{"seq":7}`).Data
			sameShape(t, "msg get with headers", got, capturedBody(t, "resp", "X4-", api.SubjMsgGet, `"hdrs"`))
			json.Unmarshal(got, &mg)
			if string(mg.Message.Header) != "NATS/1.0\r\nNats-Msg-Id: article-9\r\n\r\n" {
				t.Errorf("stored header %q", mg.Message.Header)
			}
			got = request(t, nc, api.SubjMsgGet+walkStream, `{"seq":99}`).Data
			if want := capturedBody(t, "resp", "X4-", api.SubjMsgGet, `"error"`); !bytes.Equal(got, want) {
				t.Errorf("missing msg get\n got %s\nwant %s", got, want)
			}

			// X3 direct get: by seq, last by subject (body and subject
			// forms), missing.
			r := request(t, nc, api.SubjDirectGet+walkStream, `{"seq":2}`)
			if string(r.Data) != walkBodies[1] || r.Header.Get("Nats-Stream") != walkStream ||
				r.Header.Get("Nats-Subject") != "hello.python" || r.Header.Get("Nats-Sequence") != "2" ||
				!strings.HasPrefix(r.Header.Get("Nats-Time-Stamp"), "20") {
				t.Errorf("direct get 2: %q %v", r.Data, r.Header)
			}
			for _, q := range []struct{ subj, body string }{
				{api.SubjDirectGet + walkStream, `{"last_by_subj":"hello.python"}`},
				{api.SubjDirectGet + walkStream + ".hello.python", ""},
			} {
				r = request(t, nc, q.subj, q.body)
				if r.Header.Get("Nats-Sequence") != "7" || r.Header.Get("Nats-Msg-Id") != "article-9" {
					t.Errorf("direct get %s %s: %v", q.subj, q.body, r.Header)
				}
			}
			r = request(t, nc, api.SubjDirectGet+walkStream, `{"seq":99}`)
			if r.Header.Get("Status") != "404" || r.Header.Get("Description") != "Message Not Found" || len(r.Data) != 0 {
				t.Errorf("direct get 99: %v %q", r.Header, r.Data)
			}

			// 24 purge.
			got = request(t, nc, api.SubjStreamPurge+walkStream, "").Data
			if string(got) != `{"type":"io.nats.jetstream.api.v1.stream_purge_response","success":true,"purged":7}` {
				t.Errorf("purge: %s", got)
			}
			got = request(t, nc, api.SubjStreamInfo+walkStream, "").Data
			sameShape(t, "info after purge", got, capturedBody(t, "resp", "24-", api.SubjStreamInfo, `"first_seq":11`))
			json.Unmarshal(got, &info)
			if info.State.Msgs != 0 || info.State.FirstSeq != 8 || info.State.LastSeq != 7 || info.State.LastTime.IsZero() {
				t.Errorf("state after purge: %+v", info.State)
			}

			// 25 stream rm, 26 stream ls, X11 names when empty.
			got = request(t, nc, api.SubjStreamDelete+walkStream, "").Data
			if want := capturedBody(t, "resp", "25-", api.SubjStreamDelete); !bytes.Equal(got, want) {
				t.Errorf("delete: %s", got)
			}
			got = request(t, nc, api.SubjStreamList, `{"offset":0}`).Data
			if want := `{"type":"io.nats.jetstream.api.v1.stream_list_response","total":0,"offset":0,"limit":256,"streams":[]}`; string(got) != want {
				t.Errorf("empty list: %s", got)
			}
			got = request(t, nc, api.SubjStreamNames, `{"offset":0}`).Data
			if want := capturedBody(t, "resp", "X11-", api.SubjStreamNames, `null`); !bytes.Equal(got, want) {
				t.Errorf("empty names: %s", got)
			}
			got = request(t, nc, api.SubjAccountInfo, "").Data
			var ai api.AccountInfoResponse
			json.Unmarshal(got, &ai)
			if ai.API.Total < 15 || ai.API.Errors != 1 || ai.Streams != 0 {
				t.Errorf("api stats %+v", ai.AccountStats)
			}
		})
	}
}
