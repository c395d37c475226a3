package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// The crash points of the admin operations that touch more than one file.
// For each operation, the test takes a crash image of the store (what a
// power loss leaves: vfs.MemFS.CrashClone) before every write, sync,
// rename, remove and truncate it makes, and after its reply; it then
// starts JetStream on each image and checks that the stream is either as
// it was before the operation or as the operation left it, never a mix:
//
//	operation        before                    after
//	stream create    no stream                 stream, empty
//	stream delete    stream, 20 msgs, consumer  no stream, no hidden leftovers
//	stream update    old config                 new config, messages kept
//	stream purge     20 msgs                    0 msgs, last seq 20
//	consumer create  no consumer                consumer
//	consumer delete  consumer                   no consumer
//
// A stream that comes back empty after a delete (its sequences restarting
// at 1 under a durable consumer's old ack floor) is the failure this guards.

// jsOn starts JetStream over fs in process (no listener).
func jsOn(t *testing.T, fs vfs.FS) (*server.Server, *JetStream) {
	t.Helper()
	srv, err := server.New(server.Options{JetStream: true, APILevel: api.Level})
	if err != nil {
		t.Fatal(err)
	}
	js, err := New(srv, Config{StoreDir: "/store", FS: fs, Sync: wal.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	return srv, js
}

// call sends an API request in process and returns the reply.
func call(t *testing.T, srv *server.Server, subj, body string) []byte {
	t.Helper()
	inbox := "_INBOX.cp." + subj
	ch := make(chan []byte, 1)
	sub, err := srv.Subscribe(inbox, "", func(m *server.Msg) {
		select {
		case ch <- append([]byte(nil), m.Data...):
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	srv.Publish(subj, inbox, nil, []byte(body))
	select {
	case b := <-ch:
		var r api.Response
		if json.Unmarshal(b, &r) == nil && r.Error != nil {
			t.Fatalf("%s: %v", subj, r.Error)
		}
		return b
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no reply", subj)
		return nil
	}
}

type storeView struct {
	exists   bool
	msgs     uint64
	lastSeq  uint64
	consumer bool
	desc     string // the stream's description (changed by the update case)
	leftover []string
}

func (v storeView) String() string {
	return fmt.Sprintf("exists=%v msgs=%d last=%d consumer=%v desc=%q leftovers=%v", v.exists, v.msgs, v.lastSeq, v.consumer, v.desc, v.leftover)
}

// viewOf opens JetStream on a crash image and reports stream S.
func viewOf(t *testing.T, fs vfs.FS) storeView {
	t.Helper()
	srv, js := jsOn(t, fs)
	defer srv.Shutdown(context.Background())
	if errs := js.LoadErrors(); len(errs) > 0 {
		t.Fatalf("load errors: %v", errs)
	}
	var v storeView
	if s := js.lookup("S"); s != nil {
		st := s.store.State()
		v = storeView{exists: true, msgs: st.Msgs, lastSeq: st.LastSeq, consumer: s.cons.get("D") != nil, desc: s.config().Description}
	}
	names, _ := fs.ReadDir(streamsDir("/store", GlobalAccount))
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			v.leftover = append(v.leftover, n)
		}
	}
	return v
}

func TestAdminCrashPoints(t *testing.T) {
	full := storeView{exists: true, msgs: 20, lastSeq: 20, consumer: true}
	noCons := storeView{exists: true, msgs: 20, lastSeq: 20}
	for _, tc := range []struct {
		name          string
		setup         func(t *testing.T, srv *server.Server)
		op            func(t *testing.T, srv *server.Server)
		before, after storeView
	}{
		{"stream create", nil,
			func(t *testing.T, srv *server.Server) {
				call(t, srv, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)
			},
			storeView{}, storeView{exists: true}},
		{"stream delete", withMessages(true),
			func(t *testing.T, srv *server.Server) { call(t, srv, "$JS.API.STREAM.DELETE.S", "") },
			full, storeView{}},
		{"stream update", withMessages(true),
			func(t *testing.T, srv *server.Server) {
				call(t, srv, "$JS.API.STREAM.UPDATE.S", `{"name":"S","subjects":["s.>"],"description":"v2"}`)
			},
			full, storeView{exists: true, msgs: 20, lastSeq: 20, consumer: true, desc: "v2"}},
		{"stream purge", withMessages(false),
			func(t *testing.T, srv *server.Server) { call(t, srv, "$JS.API.STREAM.PURGE.S", "") },
			noCons, storeView{exists: true, lastSeq: 20}},
		{"consumer create", withMessages(false),
			func(t *testing.T, srv *server.Server) {
				call(t, srv, "$JS.API.CONSUMER.DURABLE.CREATE.S.D", `{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}`)
			},
			noCons, full},
		{"consumer delete", withMessages(true),
			func(t *testing.T, srv *server.Server) { call(t, srv, "$JS.API.CONSUMER.DELETE.S.D", "") },
			full, noCons},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMemFS()
			var mu sync.Mutex
			var images []*vfs.MemFS
			var ops []string
			armed := false
			hook := &vfs.HookFS{Inner: mem, Hook: func(op, path string, mut bool) {
				mu.Lock()
				defer mu.Unlock()
				if armed && mut {
					images = append(images, mem.CrashClone())
					ops = append(ops, op+" "+path)
				}
			}}
			srv, _ := jsOn(t, hook)
			if tc.setup != nil {
				tc.setup(t, srv)
			}
			mu.Lock()
			armed = true
			mu.Unlock()
			tc.op(t, srv)
			mu.Lock()
			armed = false
			images = append(images, mem.CrashClone())
			ops = append(ops, "after the reply")
			mu.Unlock()
			srv.Shutdown(context.Background())
			if len(images) < 2 {
				t.Fatalf("the operation made no change on disk: %v", ops)
			}
			for i, img := range images {
				got := viewOf(t, img)
				got.leftover = nil // a crash may leave a hidden directory; the load after it must not
				if again := viewOf(t, img); len(again.leftover) > 0 {
					t.Fatalf("crash before %q: hidden leftovers survive a restart: %v", ops[i], again.leftover)
				}
				if got.String() != tc.before.String() && got.String() != tc.after.String() {
					t.Fatalf("crash before %q (point %d of %d): %v, want before (%v) or after (%v)",
						ops[i], i+1, len(images), got, tc.before, tc.after)
				}
				if i == len(images)-1 && got.String() != tc.after.String() {
					t.Fatalf("after the reply: %v, want %v", got, tc.after)
				}
			}
			t.Logf("%d crash points", len(images))
		})
	}
}

// withMessages creates stream S with 20 messages and, if consumer, the
// durable consumer D.
func withMessages(consumer bool) func(t *testing.T, srv *server.Server) {
	return func(t *testing.T, srv *server.Server) {
		call(t, srv, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)
		// 400 bytes each: the messages span several segments, so a purge
		// removes whole segment files.
		for i := 0; i < 20; i++ {
			call(t, srv, "s.x", strings.Repeat("m", 400)+strconv.Itoa(i))
		}
		if consumer {
			call(t, srv, "$JS.API.CONSUMER.DURABLE.CREATE.S.D", `{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}`)
		}
	}
}
