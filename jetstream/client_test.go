package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// The tests in this file run once per storage type through the nats.go
// jetstream client: one behavioural suite for file and memory streams.

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func storageOf(typ api.StorageType) njs.StorageType {
	if typ == api.MemoryStorage {
		return njs.MemoryStorage
	}
	return njs.FileStorage
}

// forEachStorage runs fn against a fresh server per storage type.
func forEachStorage(t *testing.T, fn func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType)) {
	for _, st := range storages {
		t.Run(st.name, func(t *testing.T) {
			ts := startServer(t, fastSync())
			js, err := njs.New(ts.connect())
			if err != nil {
				t.Fatal(err)
			}
			fn(t, ts, js, storageOf(st.typ))
		})
	}
}

// apiCode returns the err_code of a JetStream API error, 0 otherwise. Some
// nats.go calls flatten the API error into their message; it is read from
// there.
func apiCode(err error) njs.ErrorCode {
	var apiErr *njs.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode
	}
	if err != nil {
		var code njs.ErrorCode
		if i := strings.Index(err.Error(), "err_code="); i >= 0 {
			fmt.Sscanf(err.Error()[i:], "err_code=%d", &code)
			return code
		}
	}
	return 0
}

func TestStreamLifecycle(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		cfg := njs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*"}, Storage: storage, Description: "d",
			Metadata: map[string]string{"owner": "team"}}
		s, err := js.CreateStream(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		info := s.CachedInfo()
		if info.Config.Duplicates != 2*time.Minute || info.Config.MaxMsgs != -1 || info.Config.Metadata["owner"] != "team" ||
			info.Config.Description != "d" || info.Created.IsZero() {
			t.Fatalf("created config %+v", info.Config)
		}
		// Same config again is fine; a different one is refused.
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatalf("idempotent create: %v", err)
		}
		diff := cfg
		diff.MaxMsgs = 5
		if _, err := js.CreateStream(ctx, diff); !errors.Is(err, njs.ErrStreamNameAlreadyInUse) {
			t.Fatalf("create with other config: %v", err)
		}
		// Overlapping subjects belong to one stream only.
		_, err = js.CreateStream(ctx, njs.StreamConfig{Name: "OTHER", Subjects: []string{"orders.new"}, Storage: storage})
		if apiCode(err) != 10065 {
			t.Fatalf("overlap: %v", err)
		}
		// Update: more subjects and a limit.
		cfg.Subjects = append(cfg.Subjects, "returns.>")
		cfg.MaxMsgs = 100
		s, err = js.UpdateStream(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CachedInfo().Config; got.MaxMsgs != 100 || len(got.Subjects) != 2 {
			t.Fatalf("updated %+v", got)
		}
		if _, err := js.Publish(ctx, "returns.a.b", []byte("x")); err != nil {
			t.Fatalf("publish on added subject: %v", err)
		}
		bad := cfg
		bad.Storage = njs.FileStorage + njs.MemoryStorage - storage
		if _, err := js.UpdateStream(ctx, bad); apiCode(err) != 10052 {
			t.Fatalf("storage change: %v", err)
		}
		if _, err := js.UpdateStream(ctx, njs.StreamConfig{Name: "NOPE", Storage: storage}); !errors.Is(err, njs.ErrStreamNotFound) {
			t.Fatalf("update missing: %v", err)
		}

		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}, Storage: storage}); err != nil {
			t.Fatal(err)
		}
		var names []string
		for n := range js.StreamNames(ctx).Name() {
			names = append(names, n)
		}
		if fmt.Sprint(names) != "[EVENTS ORDERS]" {
			t.Fatalf("names %v", names)
		}
		l := js.ListStreams(ctx, njs.WithStreamListSubject("events.x"))
		var listed []string
		for i := range l.Info() {
			listed = append(listed, i.Config.Name)
		}
		if l.Err() != nil || fmt.Sprint(listed) != "[EVENTS]" {
			t.Fatalf("filtered list %v %v", listed, l.Err())
		}
		if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Stream(ctx, "ORDERS"); !errors.Is(err, njs.ErrStreamNotFound) {
			t.Fatalf("deleted stream: %v", err)
		}
		if err := js.DeleteStream(ctx, "ORDERS"); !errors.Is(err, njs.ErrStreamNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
	})
}

func TestPublishGetDelete(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		for _, direct := range []bool{true, false} {
			ctx := ctxT(t)
			name := fmt.Sprintf("S_%v", direct)
			s, err := js.CreateStream(ctx, njs.StreamConfig{Name: name, Subjects: []string{name + ".*"}, Storage: storage, AllowDirect: direct})
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 10; i++ {
				subj := name + ".a"
				if i%2 == 0 {
					subj = name + ".b"
				}
				ack, err := js.Publish(ctx, subj, []byte(fmt.Sprint(i)))
				if err != nil {
					t.Fatal(err)
				}
				if ack.Stream != name || ack.Sequence != uint64(i) || ack.Duplicate {
					t.Fatalf("ack %+v", ack)
				}
			}
			m, err := s.GetMsg(ctx, 3)
			if err != nil || string(m.Data) != "3" || m.Subject != name+".a" || m.Time.IsZero() {
				t.Fatalf("get 3: %v %+v", err, m)
			}
			m, err = s.GetLastMsgForSubject(ctx, name+".b")
			if err != nil || m.Sequence != 10 {
				t.Fatalf("last b: %v %+v", err, m)
			}
			m, err = s.GetMsg(ctx, 4, njs.WithGetMsgSubject(name+".a"))
			if err != nil || m.Sequence != 5 {
				t.Fatalf("next a from 4: %v %+v", err, m)
			}
			if _, err := s.GetMsg(ctx, 99); !errors.Is(err, njs.ErrMsgNotFound) {
				t.Fatalf("missing: %v", err)
			}
			if err := s.DeleteMsg(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if err := s.SecureDeleteMsg(ctx, 4); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteMsg(ctx, 4); apiCode(err) != 10043 {
				t.Fatalf("delete deleted: %v", err)
			}
			if _, err := s.GetMsg(ctx, 2); !errors.Is(err, njs.ErrMsgNotFound) {
				t.Fatalf("deleted msg: %v", err)
			}
			info, err := s.Info(ctx, njs.WithDeletedDetails(true), njs.WithSubjectFilter(">"))
			if err != nil {
				t.Fatal(err)
			}
			st := info.State
			if st.Msgs != 8 || st.NumDeleted != 2 || fmt.Sprint(st.Deleted) != "[2 4]" ||
				st.Subjects[name+".a"] != 5 || st.Subjects[name+".b"] != 3 {
				t.Fatalf("state %+v", st)
			}
			// Purges: by subject keeping one, up to a sequence, all.
			if err := s.Purge(ctx, njs.WithPurgeSubject(name+".a"), njs.WithPurgeKeep(1)); err != nil {
				t.Fatal(err)
			}
			if info, _ = s.Info(ctx); info.State.Msgs != 4 {
				t.Fatalf("after keep purge %+v", info.State)
			}
			if err := s.Purge(ctx, njs.WithPurgeSequence(8)); err != nil {
				t.Fatal(err)
			}
			if info, _ = s.Info(ctx); info.State.Msgs != 3 || info.State.FirstSeq != 8 {
				t.Fatalf("after seq purge %+v", info.State)
			}
			if err := s.Purge(ctx); err != nil {
				t.Fatal(err)
			}
			if info, _ = s.Info(ctx); info.State.Msgs != 0 || info.State.FirstSeq != 11 || info.State.LastSeq != 10 {
				t.Fatalf("after purge %+v", info.State)
			}
			// Sequences keep growing after a purge.
			if ack, err := js.Publish(ctx, name+".a", nil); err != nil || ack.Sequence != 11 {
				t.Fatalf("publish after purge: %v %+v", err, ack)
			}
		}
	})
}

func TestPublishAsyncAcksInOrder(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "BULK", Subjects: []string{"bulk"}, Storage: storage}); err != nil {
			t.Fatal(err)
		}
		const n = 5000
		futures := make([]njs.PubAckFuture, n)
		for i := range futures {
			f, err := js.PublishAsync("bulk", []byte("payload"))
			if err != nil {
				t.Fatal(err)
			}
			futures[i] = f
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			t.Fatal("async publishes not acknowledged")
		}
		for i, f := range futures {
			select {
			case ack := <-f.Ok():
				if ack.Sequence != uint64(i+1) {
					t.Fatalf("ack %d has seq %d", i, ack.Sequence)
				}
			case err := <-f.Err():
				t.Fatalf("publish %d: %v", i, err)
			}
		}
		s, _ := js.Stream(ctx, "BULK")
		if info, _ := s.Info(ctx); info.State.Msgs != n || info.State.LastSeq != n {
			t.Fatalf("state %+v", info.State)
		}
	})
}

func TestExpectedHeaders(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "E", Subjects: []string{"e.*"}, Storage: storage}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "e.a", nil, njs.WithExpectStream("OTHER")); apiCode(err) != 10060 {
			t.Fatalf("wrong stream: %v", err)
		}
		if _, err := js.Publish(ctx, "e.a", nil, njs.WithExpectStream("E"), njs.WithExpectLastSequence(0)); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "e.a", nil, njs.WithExpectLastSequence(0)); apiCode(err) != 10071 {
			t.Fatalf("wrong last seq: %v", err)
		}
		if _, err := js.Publish(ctx, "e.b", nil, njs.WithExpectLastSequence(1), njs.WithMsgID("m2")); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "e.a", nil, njs.WithExpectLastSequencePerSubject(2)); apiCode(err) != 10071 {
			t.Fatalf("wrong subject seq: %v", err)
		}
		if _, err := js.Publish(ctx, "e.a", nil, njs.WithExpectLastSequencePerSubject(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "e.c", nil, njs.WithExpectLastSequencePerSubject(0)); err != nil {
			t.Fatalf("first on subject: %v", err)
		}
		if _, err := js.Publish(ctx, "e.c", nil, njs.WithExpectLastSequenceForSubject(2, "e.b")); err != nil {
			t.Fatalf("seq for other subject: %v", err)
		}
		if _, err := js.Publish(ctx, "e.a", nil, njs.WithExpectLastMsgID("m2")); apiCode(err) != 10070 {
			t.Fatalf("last msg id after a message without id: %v", err)
		}
		if _, err := js.Publish(ctx, "e.a", nil, njs.WithMsgID("m6")); err != nil {
			t.Fatal(err)
		}
		if ack, err := js.Publish(ctx, "e.a", nil, njs.WithExpectLastMsgID("m6")); err != nil || ack.Sequence != 7 {
			t.Fatalf("last msg id: %v %+v", err, ack)
		}
	})
}

func TestDuplicates(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "D", Subjects: []string{"d"}, Storage: storage,
			Duplicates: 300 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		a1, err := js.Publish(ctx, "d", []byte("1"), njs.WithMsgID("x"))
		if err != nil || a1.Duplicate {
			t.Fatal(err, a1)
		}
		a2, err := js.Publish(ctx, "d", []byte("2"), njs.WithMsgID("x"))
		if err != nil || !a2.Duplicate || a2.Sequence != a1.Sequence {
			t.Fatalf("duplicate: %v %+v", err, a2)
		}
		// Many copies in flight at once get the original's sequence.
		var fs []njs.PubAckFuture
		for i := 0; i < 50; i++ {
			f, err := js.PublishAsync("d", []byte("y"), njs.WithMsgID("y"))
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, f)
		}
		<-js.PublishAsyncComplete()
		originals := 0
		var seq uint64
		for _, f := range fs {
			select {
			case ack := <-f.Ok():
				if !ack.Duplicate {
					originals++
				}
				if seq == 0 {
					seq = ack.Sequence
				}
				if ack.Sequence != seq {
					t.Fatalf("duplicates answered with seq %d and %d", seq, ack.Sequence)
				}
			case err := <-f.Err():
				t.Fatal(err)
			}
		}
		if originals != 1 {
			t.Fatalf("%d copies stored", originals)
		}
		// Past the window the id is new again.
		eventually(t, "window expiry", func() bool {
			a, err := js.Publish(ctx, "d", []byte("3"), njs.WithMsgID("x"))
			return err == nil && !a.Duplicate
		})
	})
}

func TestRollup(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "R", Subjects: []string{"r.*"}, Storage: storage, AllowRollup: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"r.a", "r.a", "r.b", "r.a", "r.b"} {
			if _, err := js.Publish(ctx, subj, nil); err != nil {
				t.Fatal(err)
			}
		}
		m := nats.NewMsg("r.a")
		m.Header.Set("Nats-Rollup", "sub")
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
		info, _ := s.Info(ctx, njs.WithSubjectFilter(">"))
		if info.State.Msgs != 3 || info.State.Subjects["r.a"] != 1 || info.State.Subjects["r.b"] != 2 {
			t.Fatalf("after subject rollup %+v", info.State)
		}
		m = nats.NewMsg("r.b")
		m.Header.Set("Nats-Rollup", "all")
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
		if info, _ = s.Info(ctx); info.State.Msgs != 1 || info.State.FirstSeq != 7 {
			t.Fatalf("after rollup all %+v", info.State)
		}
		m.Header.Set("Nats-Rollup", "everything")
		if _, err := js.PublishMsg(ctx, m); apiCode(err) != 10111 {
			t.Fatalf("bad rollup value: %v", err)
		}
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "NR", Subjects: []string{"nr"}, Storage: storage}); err != nil {
			t.Fatal(err)
		}
		m = nats.NewMsg("nr")
		m.Header.Set("Nats-Rollup", "sub")
		if _, err := js.PublishMsg(ctx, m); apiCode(err) != 10111 {
			t.Fatalf("rollup not allowed: %v", err)
		}
	})
}

func TestLimits(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "NEW", Subjects: []string{"new"}, Storage: storage,
			MaxMsgs: 3, Discard: njs.DiscardNew, MaxMsgSize: 16})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if _, err := js.Publish(ctx, "new", []byte("ok")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := js.Publish(ctx, "new", []byte("ok")); apiCode(err) != 10077 {
			t.Fatalf("over max msgs: %v", err)
		}
		if _, err := js.Publish(ctx, "new", []byte("seventeen bytes!!")); apiCode(err) != 10054 {
			t.Fatalf("over max msg size: %v", err)
		}
		if info, _ := s.Info(ctx); info.State.Msgs != 3 || info.State.LastSeq != 3 {
			t.Fatalf("state %+v", info.State)
		}

		s, err = js.CreateStream(ctx, njs.StreamConfig{Name: "PER", Subjects: []string{"per.*"}, Storage: storage, MaxMsgsPerSubject: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			js.Publish(ctx, "per.a", nil)
		}
		if info, _ := s.Info(ctx); info.State.Msgs != 2 || info.State.FirstSeq != 4 {
			t.Fatalf("per subject %+v", info.State)
		}
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "PERNEW", Subjects: []string{"pn.*"}, Storage: storage,
			MaxMsgsPerSubject: 1, Discard: njs.DiscardNew, DiscardNewPerSubject: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "pn.a", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "pn.b", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "pn.a", nil); apiCode(err) != 10077 {
			t.Fatalf("discard new per subject: %v", err)
		}

		s, err = js.CreateStream(ctx, njs.StreamConfig{Name: "AGE", Subjects: []string{"age"}, Storage: storage, MaxAge: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if ci := s.CachedInfo(); ci.Config.Duplicates != 200*time.Millisecond {
			t.Fatalf("window %v", ci.Config.Duplicates)
		}
		if _, err := js.Publish(ctx, "age", nil); err != nil {
			t.Fatal(err)
		}
		eventually(t, "max age", func() bool {
			info, err := s.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return info.State.Msgs == 0 && info.State.LastSeq == 1
		})
	})
}

func TestDenyAndSeal(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		cfg := njs.StreamConfig{Name: "LOCKED", Subjects: []string{"locked"}, Storage: storage, DenyDelete: true, DenyPurge: true}
		s, err := js.CreateStream(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		js.Publish(ctx, "locked", nil)
		if err := s.DeleteMsg(ctx, 1); apiCode(err) != 10057 {
			t.Fatalf("deny delete: %v", err)
		}
		if err := s.Purge(ctx); apiCode(err) != 10110 {
			t.Fatalf("deny purge: %v", err)
		}
		cfg.DenyDelete = false
		if _, err := js.UpdateStream(ctx, cfg); apiCode(err) != 10052 {
			t.Fatalf("lifting deny delete: %v", err)
		}
		cfg.DenyDelete, cfg.Sealed = true, true
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "locked", nil); apiCode(err) != 10109 {
			t.Fatalf("publish to sealed: %v", err)
		}
		cfg.Sealed = false
		if _, err := js.UpdateStream(ctx, cfg); apiCode(err) != 10052 {
			t.Fatalf("unseal: %v", err)
		}
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "SEALED", Storage: storage, Sealed: true}); apiCode(err) != 10052 {
			t.Fatalf("create sealed: %v", err)
		}
	})
}

func TestKeyValueClient(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		kv, err := js.CreateKeyValue(ctx, njs.KeyValueConfig{Bucket: "b", History: 3, Storage: storage})
		if err != nil {
			t.Fatal(err)
		}
		r1, err := kv.Put(ctx, "k", []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Create(ctx, "k", []byte("x")); !errors.Is(err, njs.ErrKeyExists) {
			t.Fatalf("create existing: %v", err)
		}
		if _, err := kv.Update(ctx, "k", []byte("v2"), r1+5); apiCode(err) != 10071 {
			t.Fatalf("stale update: %v", err)
		}
		r2, err := kv.Update(ctx, "k", []byte("v2"), r1)
		if err != nil {
			t.Fatal(err)
		}
		e, err := kv.Get(ctx, "k")
		if err != nil || string(e.Value()) != "v2" || e.Revision() != r2 {
			t.Fatalf("get: %v %v", err, e)
		}
		if e, err := kv.GetRevision(ctx, "k", r1); err != nil || string(e.Value()) != "v1" {
			t.Fatalf("get revision: %v %v", err, e)
		}
		if err := kv.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Get(ctx, "k"); !errors.Is(err, njs.ErrKeyNotFound) {
			t.Fatalf("get deleted: %v", err)
		}
		if _, err := kv.Create(ctx, "k", []byte("v3")); err != nil {
			t.Fatalf("create after delete: %v", err)
		}
		if err := kv.Purge(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		st, err := kv.Status(ctx)
		if err != nil || st.Values() != 1 {
			t.Fatalf("after purge: %v values=%d", err, st.Values())
		}
		if _, err := js.CreateKeyValue(ctx, njs.KeyValueConfig{Bucket: "b", History: 3, Storage: storage}); err != nil {
			t.Fatalf("create same bucket again: %v", err)
		}
		var buckets []string
		for n := range js.KeyValueStoreNames(ctx).Name() {
			buckets = append(buckets, n)
		}
		if fmt.Sprint(buckets) != "[b]" {
			t.Fatalf("buckets %v", buckets)
		}
	})
}

func TestCoreSubscribersStillReceive(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "C", Subjects: []string{"c.>"}, Storage: storage}); err != nil {
			t.Fatal(err)
		}
		nc := ts.connect()
		sub, err := nc.SubscribeSync("c.>")
		if err != nil {
			t.Fatal(err)
		}
		nc.Flush()
		if _, err := js.Publish(ctx, "c.x", []byte("hi")); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil || string(m.Data) != "hi" {
			t.Fatalf("core subscriber: %v %v", err, m)
		}
	})
}

func TestPaging(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	ctx := ctxT(t)
	const n = 300
	for i := 0; i < n; i++ {
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: fmt.Sprintf("P%03d", i), Storage: njs.MemoryStorage}); err != nil {
			t.Fatal(err)
		}
	}
	var lr api.StreamListResponse
	requestJSON(t, nc, api.SubjStreamList, `{"offset":250}`, &lr)
	if lr.Total != n || lr.Offset != 250 || lr.Limit != 256 || len(lr.Streams) != 50 || lr.Streams[0].Config.Name != "P250" {
		t.Fatalf("list page: total=%d offset=%d limit=%d len=%d", lr.Total, lr.Offset, lr.Limit, len(lr.Streams))
	}
	var nr api.StreamNamesResponse
	requestJSON(t, nc, api.SubjStreamNames, `{"offset":299}`, &nr)
	if nr.Total != n || len(nr.Streams) != 1 || nr.Streams[0] != "P299" || nr.Limit != 1024 {
		t.Fatalf("names page %+v", nr)
	}
	requestJSON(t, nc, api.SubjStreamNames, `{"subject":"P007"}`, &nr)
	if nr.Total != 1 || nr.Streams[0] != "P007" {
		t.Fatalf("names by subject %+v", nr)
	}
	count := 0
	l := js.ListStreams(ctx)
	for range l.Info() {
		count++
	}
	if l.Err() != nil || count != n {
		t.Fatalf("client listed %d: %v", count, l.Err())
	}
}

// TestStreamCapturingItsReplies: a stream whose subjects include the reply
// inbox stores the PubAck too (nats-server does the same) instead of
// deadlocking on its own lock.
func TestStreamCapturingItsReplies(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "LOOP", Subjects: []string{"loop.in", "loop.reply.*"}, Storage: storage})
		if err != nil {
			t.Fatal(err)
		}
		nc := ts.connect()
		sub, _ := nc.SubscribeSync("loop.reply.*")
		nc.Flush()
		if err := nc.PublishRequest("loop.in", "loop.reply.1", []byte("x")); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil || string(m.Data) != `{"stream":"LOOP","seq":1}` {
			t.Fatalf("ack %v %v", err, m)
		}
		eventually(t, "the ack stored", func() bool {
			info, err := s.Info(ctx)
			return err == nil && info.State.Msgs == 2
		})
	})
}

// TestConcurrentPublishAndAdmin publishes from several connections while
// the stream is purged, updated and finally deleted; every publish must be
// answered (stored or refused) and nothing may deadlock.
func TestConcurrentPublishAndAdmin(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		cfg := njs.StreamConfig{Name: "BUSY", Subjects: []string{"busy.*"}, Storage: storage, AllowRollup: true}
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		const pubs, each = 4, 400
		errs := make(chan error, pubs)
		for p := 0; p < pubs; p++ {
			go func(p int) {
				pjs, err := njs.New(ts.connect())
				if err != nil {
					errs <- err
					return
				}
				var fs []njs.PubAckFuture
				for i := 0; i < each; i++ {
					m := nats.NewMsg(fmt.Sprintf("busy.%d", i%3))
					if i%50 == 0 {
						m.Header.Set("Nats-Rollup", "sub")
					}
					f, err := pjs.PublishMsgAsync(m, njs.WithMsgID(fmt.Sprintf("%d-%d", p, i%100)))
					if err != nil {
						errs <- err
						return
					}
					fs = append(fs, f)
				}
				for _, f := range fs {
					select {
					case <-f.Ok():
					case <-f.Err():
					case <-ctx.Done():
						errs <- fmt.Errorf("publisher %d: unanswered publish", p)
						return
					}
				}
				errs <- nil
			}(p)
		}
		s, _ := js.Stream(ctx, "BUSY")
		for i := 0; i < 20; i++ {
			if err := s.Purge(ctx, njs.WithPurgeKeep(5)); err != nil {
				t.Fatal(err)
			}
			cfg.MaxMsgs = int64(1000 + i)
			if _, err := js.UpdateStream(ctx, cfg); err != nil {
				t.Fatal(err)
			}
		}
		for p := 0; p < pubs; p++ {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if err := js.DeleteStream(ctx, "BUSY"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDeleteWhilePublishing deletes a stream under a stream of async
// publishes: each publish is still answered, by a PubAck, an error, or the
// no-responders status once the stream is gone.
func TestDeleteWhilePublishing(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		ctx := ctxT(t)
		if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "DOOMED", Subjects: []string{"doomed"}, Storage: storage}); err != nil {
			t.Fatal(err)
		}
		pjs, _ := njs.New(ts.connect(), njs.WithPublishAsyncMaxPending(64))
		var deleted atomic.Bool
		done := make(chan error, 1)
		go func() {
			var fs []njs.PubAckFuture
			for i := 0; i < 3000; i++ {
				f, err := pjs.PublishAsync("doomed", []byte("x"))
				if err != nil {
					// nats.go retries publishes that found no responder and
					// stalls once they pile up: expected only after the delete.
					if !deleted.Load() {
						done <- err
						return
					}
					break
				}
				fs = append(fs, f)
			}
			for _, f := range fs {
				select {
				case <-f.Ok():
				case <-f.Err():
				case <-ctx.Done():
					done <- errors.New("unanswered publish")
					return
				}
			}
			done <- nil
		}()
		eventually(t, "some messages", func() bool {
			s, err := js.Stream(ctx, "DOOMED")
			return err == nil && s.CachedInfo().State.Msgs > 100
		})
		deleted.Store(true)
		if err := js.DeleteStream(ctx, "DOOMED"); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestMsgGetInvalidSubjectNotFound: a MSG.GET for the last (or next)
// message on a subject no message can have, such as "$O.bucket.M." that
// the object store's get("") asks for, finds no message: 404 10037 as
// nats-server answers, not 400 10003, which the clients do not take for
// "not found".
func TestMsgGetInvalidSubjectNotFound(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var cr api.StreamCreateResponse
	requestJSON(t, nc, api.SubjStreamCreate+"OBJ_b", `{"name":"OBJ_b","subjects":["$O.b.C.>","$O.b.M.>"]}`, &cr)
	if cr.Error != nil {
		t.Fatal(cr.Error)
	}
	if err := nc.Publish("$O.b.M.x", []byte("meta")); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"last_by_subj":"$O.b.M."}`, `{"last_by_subj":"a..b"}`, `{"next_by_subj":"$O.b.M.","seq":1}`} {
		var r struct {
			Error *api.ApiError `json:"error"`
		}
		requestJSON(t, nc, "$JS.API.STREAM.MSG.GET.OBJ_b", body, &r)
		if r.Error == nil || r.Error.Code != 404 || r.Error.ErrCode != api.ErrNoMessageFound || r.Error.Description != "no message found" {
			t.Errorf("%s: %+v, want 404 10037 no message found", body, r.Error)
		}
	}
}
