package apiserver

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// fakeOps records the replies; its embedded Ops is nil, so a handler that
// reaches an operation the test did not expect panics, which Serve turns
// into a 500 reply.
type fakeOps struct {
	Ops
	replies []string
	failed  []bool
	deleted string
}

func (f *fakeOps) SendReply(r *Request, b []byte, failed bool) {
	f.replies = append(f.replies, string(b))
	f.failed = append(f.failed, failed)
}

func (f *fakeOps) DeleteStream(name string) *api.ApiError {
	f.deleted = name
	if name == "GONE" {
		return api.NewError(api.ErrStreamNotFound)
	}
	return nil
}

// serve routes and serves one request the way jetstream's handleAPI does.
func serve(t *testing.T, s *Server, subj, hdr, data string) {
	t.Helper()
	h, args, ok := s.Route(subj)
	if !ok || h.Fn == nil {
		t.Fatalf("%s: not routed to a handler", subj)
	}
	s.Serve(h, &Request{Subject: subj, Reply: "_INBOX.1", Hdr: []byte(hdr), Data: []byte(data), Args: args})
}

func newTestServer(clustered bool) (*Server, *fakeOps) {
	f := &fakeOps{}
	return New(f, Config{StoreDir: "/data/js", Logger: slog.New(slog.DiscardHandler), Clustered: clustered}), f
}

func lastError(t *testing.T, f *fakeOps) *api.ApiError {
	t.Helper()
	if len(f.replies) == 0 {
		t.Fatal("no reply")
	}
	var resp api.Response
	if err := json.Unmarshal([]byte(f.replies[len(f.replies)-1]), &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Error
}

// TestHandlersWithoutJetStream: the handlers run against any Ops; the
// request checks answer without calling an operation.
func TestHandlersWithoutJetStream(t *testing.T) {
	s, f := newTestServer(false)
	serve(t, s, "$JS.API.STREAM.DELETE.S", "", `{"x":1}`)
	if e := lastError(t, f); e == nil || e.ErrCode != api.ErrNotEmptyRequest || f.deleted != "" {
		t.Fatalf("delete with a body: %+v, deleted %q", e, f.deleted)
	}
	serve(t, s, "$JS.API.STREAM.DELETE.GONE", "", "")
	if e := lastError(t, f); e == nil || e.ErrCode != api.ErrStreamNotFound || !f.failed[len(f.failed)-1] {
		t.Fatalf("delete of a missing stream: %+v", e)
	}
	serve(t, s, "$JS.API.STREAM.DELETE.S", "", " {} ")
	if e := lastError(t, f); e != nil || f.deleted != "S" || f.failed[len(f.failed)-1] {
		t.Fatalf("delete: %+v, deleted %q", e, f.deleted)
	}
	serve(t, s, "$JS.API.STREAM.CREATE.S", "", `{"name":"T","subjects":["a"]}`)
	if e := lastError(t, f); e == nil || e.ErrCode != api.ErrStreamNameMismatch {
		t.Fatalf("create with another name: %+v", e)
	}
	serve(t, s, "$JS.API.STREAM.PEER.REMOVE.S", "", `{"peer":"n1"}`)
	if e := lastError(t, f); e == nil || e.ErrCode != api.ErrClusterRequired {
		t.Fatalf("peer remove without a cluster: %+v", e)
	}
	if _, _, ok := s.Route("$JS.API.STREAM.LEADER.STEPDOWN.S"); ok {
		t.Fatal("a step-down is routed without a cluster")
	}
	cs, _ := newTestServer(true)
	if h, _, ok := cs.Route("$JS.API.STREAM.LEADER.STEPDOWN.S"); !ok || h.Fn == nil {
		t.Fatal("a step-down is not routed in a cluster")
	}
}

// TestServeRefusesLevelAndPanics: a request needing a newer API level is
// refused before its handler, with the response's own fields; a panicking
// handler costs a 500 reply that does not show the store directory.
func TestServeRefusesLevelAndPanics(t *testing.T) {
	s, f := newTestServer(false)
	serve(t, s, "$JS.API.CONSUMER.PAUSE.S.C", "NATS/1.0\r\nNats-Required-Api-Level: 99\r\n\r\n", "")
	if e := lastError(t, f); e == nil || e.ErrCode != api.ErrRequiredApiLevel {
		t.Fatalf("level refusal: %+v", e)
	}
	if got := f.replies[len(f.replies)-1]; !strings.Contains(got, `"paused"`) {
		t.Fatalf("pause refusal without the pause fields: %s", got)
	}
	s.Register("TEST.PANIC", Mgmt, func(r *Request) { panic("boom") })
	serve(t, s, "$JS.API.TEST.PANIC", "", "")
	if e := lastError(t, f); e == nil || e.Code != 500 {
		t.Fatalf("panic: %+v", e)
	}
	got := string(s.HidePaths([]byte(`{"error":{"description":"open /data/js/jetstream/x: denied"}}`)))
	if strings.Contains(got, "/data/js/") || !strings.Contains(got, "open jetstream/x") {
		t.Fatalf("HidePaths left %q", got)
	}
}

// TestConsumerPeerMoveRefused: nats consumer cluster peer-remove and
// evacuate get their own response types and a refusal that says why (a
// consumer's replicas are its stream's); without a cluster, 10010; a
// malformed subject, a bad request.
func TestConsumerPeerMoveRefused(t *testing.T) {
	for _, clustered := range []bool{false, true} {
		s, f := newTestServer(clustered)
		for _, c := range []struct{ op, typ string }{
			{"CONSUMER.PEER.REMOVE", api.TypeConsumerRemovePeer},
			{"CONSUMER.PEER.EVACUATE", api.TypeConsumerEvacuatePeer},
		} {
			serve(t, s, "$JS.API."+c.op+".S.C", "", `{"peer":"n1"}`)
			var resp api.Response
			if err := json.Unmarshal([]byte(f.replies[len(f.replies)-1]), &resp); err != nil {
				t.Fatal(err)
			}
			want := api.ErrClusterRequired
			if clustered {
				want = api.ErrBadRequest
			}
			if resp.Type != c.typ || resp.Error == nil || resp.Error.ErrCode != want ||
				clustered && !strings.Contains(resp.Error.Description, "replicas are its stream's") {
				t.Fatalf("clustered=%v %s: %s", clustered, c.op, f.replies[len(f.replies)-1])
			}
			serve(t, s, "$JS.API."+c.op+".S", "", `{"peer":"n1"}`)
			if e := lastError(t, f); e == nil || e.ErrCode != api.ErrBadRequest || strings.Contains(e.Description, "replicas") {
				t.Fatalf("clustered=%v %s without a consumer: %+v", clustered, c.op, e)
			}
		}
	}
}
