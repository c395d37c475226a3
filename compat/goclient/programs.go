package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func asAPIError(err error, target **jetstream.APIError) bool { return errors.As(err, target) }

// attempt returns v, or the error's view when err is not nil.
func attempt(v any, err error) any {
	if err != nil {
		return errView(err)
	}
	return v
}

// goPublish: PubAcks, dedupe by Nats-Msg-Id, expected last sequence.
func goPublish(ctx context.Context, _ *nats.Conn, js jetstream.JetStream) (any, error) {
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "GOPUB", Subjects: []string{"gopub.>"}})
	if err != nil {
		return nil, err
	}
	r := map[string]any{}
	r["first"] = attempt(js.Publish(ctx, "gopub.a", []byte("1"), jetstream.WithMsgID("a")))
	r["dupe"] = attempt(js.Publish(ctx, "gopub.a", []byte("1"), jetstream.WithMsgID("a")))
	r["expect_ok"] = attempt(js.Publish(ctx, "gopub.b", []byte("2"), jetstream.WithExpectLastSequence(1)))
	r["expect_wrong"] = attempt(js.Publish(ctx, "gopub.b", []byte("3"), jetstream.WithExpectLastSequence(1)))
	r["no_stream"] = attempt(js.Publish(ctx, "nostream.x", []byte("x")))
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	r["messages"] = info.State.Msgs
	r["last_seq"] = info.State.LastSeq
	return r, nil
}

// goPull: durable pull consumer, Fetch with acks and a nak, then Next.
func goPull(ctx context.Context, _ *nats.Conn, js jetstream.JetStream) (any, error) {
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "GOPULL", Subjects: []string{"gopull.>"}})
	if err != nil {
		return nil, err
	}
	for i := 1; i <= 6; i++ {
		if _, err := js.Publish(ctx, "gopull.x", []byte(fmt.Sprintf("m%d", i))); err != nil {
			return nil, err
		}
	}
	c, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		return nil, err
	}
	var got [][]any
	batch, err := c.Fetch(4, jetstream.FetchMaxWait(3*time.Second))
	if err != nil {
		return nil, err
	}
	for m := range batch.Messages() {
		md, _ := m.Metadata()
		got = append(got, []any{md.Sequence.Stream, string(m.Data()), md.NumDelivered})
		if md.Sequence.Stream == 2 {
			err = m.Nak()
		} else {
			err = m.DoubleAck(ctx)
		}
		if err != nil {
			return nil, err
		}
	}
	var next [][]any
	for i := 0; i < 3; i++ {
		m, err := c.Next(jetstream.FetchMaxWait(3 * time.Second))
		if err != nil {
			return nil, err
		}
		md, _ := m.Metadata()
		next = append(next, []any{md.Sequence.Stream, string(m.Data()), md.NumDelivered})
		if err := m.DoubleAck(ctx); err != nil {
			return nil, err
		}
	}
	info, err := c.Info(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"fetched": got, "next": next, "num_pending": info.NumPending,
		"num_ack_pending": info.NumAckPending, "ack_floor": info.AckFloor.Stream,
	}, nil
}

// goKV: put, get, update, delete, history and keys.
func goKV(ctx context.Context, _ *nats.Conn, js jetstream.JetStream) (any, error) {
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "gokv", History: 4})
	if err != nil {
		return nil, err
	}
	r := map[string]any{}
	r["put"] = attempt(kv.Put(ctx, "k", []byte("1")))
	r["update"] = attempt(kv.Update(ctx, "k", []byte("2"), 1))
	r["update_stale"] = attempt(kv.Update(ctx, "k", []byte("3"), 1))
	r["create_exists"] = attempt(kv.Create(ctx, "k", []byte("4")))
	if e, err := kv.Get(ctx, "k"); err == nil {
		r["get"] = []any{e.Key(), string(e.Value()), e.Revision(), e.Operation().String()}
	} else {
		r["get"] = errView(err)
	}
	if err := kv.Delete(ctx, "k"); err != nil {
		return nil, err
	}
	_, err = kv.Get(ctx, "k")
	r["get_deleted"] = attempt(nil, err)
	hist, err := kv.History(ctx, "k")
	if err != nil {
		return nil, err
	}
	var h [][]any
	for _, e := range hist {
		h = append(h, []any{string(e.Value()), e.Revision(), e.Operation().String()})
	}
	r["history"] = h
	if _, err := kv.Put(ctx, "other", []byte("x")); err != nil {
		return nil, err
	}
	r["keys"] = attempt(kv.Keys(ctx))
	return r, nil
}

// goObjstore: an object of 3 x max payload, put, get, info, delete.
func goObjstore(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) (any, error) {
	os, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "gofiles"})
	if err != nil {
		return nil, err
	}
	data := make([]byte, 3*int(nc.MaxPayload())+77)
	for i := range data {
		data[i] = byte(i*13 + 1)
	}
	info, err := os.PutBytes(ctx, "big", data)
	if err != nil {
		return nil, err
	}
	back, err := os.GetBytes(ctx, "big")
	if err != nil {
		return nil, err
	}
	if err := os.Delete(ctx, "big"); err != nil {
		return nil, err
	}
	_, err = os.GetBytes(ctx, "big")
	return map[string]any{
		"size": info.Size, "chunks": info.Chunks, "digest": info.Digest,
		"get_equal": bytes.Equal(back, data), "after_delete": attempt(nil, err),
	}, nil
}
