package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// TestMirrorInMemory: a mirror in memory storage (nats.js's jsm test of a
// memory mirror with subject transforms) keeps its origin's sequences
// over gaps, at its start and inside, with the subjects transformed.
func TestMirrorInMemory(t *testing.T) {
	ts := startServer(t, fastSync())
	js := jsOf(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "O", Subjects: []string{"foo", "bar"}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		subj := "foo"
		if i%2 == 0 {
			subj = "bar"
		}
		if _, err := js.Publish(ctx, subj, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	o, _ := js.Stream(ctx, "O")
	for _, seq := range []uint64{1, 2, 3, 6} {
		if err := o.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	m, err := js.CreateStream(ctx, njs.StreamConfig{Name: "M", Storage: njs.MemoryStorage, Mirror: &njs.StreamSource{Name: "O",
		SubjectTransforms: []njs.SubjectTransformConfig{{Source: "foo", Destination: "foo-transformed"}, {Source: "bar", Destination: "bar-transformed"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.CachedInfo().Config; got.Storage != njs.MemoryStorage || len(got.Mirror.SubjectTransforms) != 2 {
		t.Fatalf("config %+v", got)
	}
	eventually(t, "mirror caught up", func() bool {
		info, err := m.Info(ctx)
		return err == nil && info.State.LastSeq == 10 && info.State.Msgs == 6
	})
	for seq := uint64(1); seq <= 10; seq++ {
		got, err := m.GetMsg(ctx, seq)
		switch seq {
		case 1, 2, 3, 6:
			if err == nil {
				t.Fatalf("seq %d, deleted in the origin, is in the mirror: %s %q", seq, got.Subject, got.Data)
			}
			continue
		}
		want := "foo-transformed"
		if seq%2 == 0 {
			want = "bar-transformed"
		}
		if err != nil || got.Subject != want || string(got.Data) != fmt.Sprint(seq) {
			t.Fatalf("seq %d: %v %v", seq, got, err)
		}
	}
	if info, _ := m.Info(ctx); info.State.FirstSeq != 4 || info.State.NumDeleted != 1 {
		t.Fatalf("mirror state %+v", info.State)
	}
}
