package jetstream

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// nats-server's per-message byte counts (server/filestore.go and
// server/memstore.go): a file stream counts its record, 22 + subject +
// payload + 8, and 4 + header when there is one; a memory stream counts
// subject + header + payload + 16.
func natsFileBytes(subj string, hdr, data int) uint64 {
	n := uint64(22 + len(subj) + data + 8)
	if hdr > 0 {
		n += uint64(4 + hdr)
	}
	return n
}

func natsMemBytes(subj string, hdr, data int) uint64 {
	return uint64(len(subj) + hdr + data + 16)
}

// TestStreamBytesAsNatsServer: state bytes, account storage and the
// max_bytes limit count each message as nats-server does for the stream's
// storage type, for messages with and without headers, across a restart.
func TestStreamBytesAsNatsServer(t *testing.T) {
	for _, storage := range []njs.StorageType{njs.FileStorage, njs.MemoryStorage} {
		t.Run(storage.String(), func(t *testing.T) {
			count := natsFileBytes
			if storage == njs.MemoryStorage {
				count = natsMemBytes
			}
			ts := startServer(t, fastSync())
			nc := ts.connect()
			js, err := njs.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			// Room for exactly the three messages below.
			m := nats.NewMsg("b.hdr")
			m.Header.Set("K", "v")
			m.Data = []byte("with header")
			hdrLen := len("NATS/1.0\r\nK: v\r\n\r\n")
			want := count("b.one", 0, 3) + count("b.hdr", hdrLen, 11) + count("b.x", 0, 0)
			s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: storage,
				MaxBytes: int64(want), Discard: njs.DiscardNew})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctxT(t), "b.one", []byte("one")); err != nil {
				t.Fatal(err)
			}
			if _, err := js.PublishMsg(ctxT(t), m); err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctxT(t), "b.x", nil); err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if info.State.Bytes != want || info.State.Msgs != 3 {
				t.Fatalf("state %d msgs, %d bytes; want 3, %d", info.State.Msgs, info.State.Bytes, want)
			}
			ai, err := js.AccountInfo(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			used := ai.Store
			if storage == njs.MemoryStorage {
				used = ai.Memory
			}
			if used != want {
				t.Fatalf("account %s usage %d, want %d", storage, used, want)
			}
			// The stream is full to the byte: the smallest message is refused.
			_, err = js.Publish(ctxT(t), "b.y", nil)
			var apiErr *njs.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10077 || apiErr.Description != "maximum bytes exceeded" {
				t.Fatalf("publish into a full stream: %v, want 10077 maximum bytes exceeded, as nats-server", err)
			}
			if storage == njs.MemoryStorage {
				return
			}
			ts = ts.restart()
			js, err = njs.New(ts.connect())
			if err != nil {
				t.Fatal(err)
			}
			s, err = js.Stream(ctxT(t), "B")
			if err != nil {
				t.Fatal(err)
			}
			if got := s.CachedInfo().State.Bytes; got != want {
				t.Fatalf("after restart: %d bytes, want %d", got, want)
			}
		})
	}
}
