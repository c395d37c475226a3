package jetstream

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
)

// putRecorder is a Replica that records Checkpoints (and has nothing else).
type putRecorder struct {
	Replica
	mu   sync.Mutex
	puts map[string][]byte
}

func (p *putRecorder) Checkpoint(key string, val []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.puts[key] = bytes.Clone(val)
	return nil
}

// TestCheckpointConsumerEncodesInOrder: a checkpoint that had to wait for
// another one (the ticker's behind a confirmed ack's, or the reverse)
// proposes the consumer's state as it is when its turn comes, never an
// older one encoded before the wait, which would overwrite the newer
// checkpoint and make the next leader redeliver a confirmed ack.
func TestCheckpointConsumerEncodesInOrder(t *testing.T) {
	rec := &putRecorder{puts: map[string][]byte{}}
	js := &JetStream{}
	c := &consumer{name: "W", s: &stream{name: "S", rep: rec}, cfg: api.ConsumerConfig{Durable: "W"}}
	for seq := consumerstate.StreamSeq(1); seq <= 3; seq++ {
		if _, err := c.mem.Deliver(seq, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	cs := &consumerSync{last: map[string][]byte{}}

	cs.mu.Lock() // another checkpoint in progress
	done := make(chan error, 1)
	go func() { done <- js.checkpointConsumer(cs, c) }()
	waitStack(t, "checkpointConsumer waiting for the checkpoint in progress", "(*JetStream).checkpointConsumer", "sync.(*Mutex).Lock")
	c.mu.Lock()
	c.mem.Ack(2) // the ack whose confirmation the waiting checkpoint must carry
	want := consumerstate.Encode(&c.mem)
	c.mu.Unlock()
	cs.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := rec.puts[cstateKey("S", "W")]
	if !bytes.Equal(got, want) {
		st, err := consumerstate.Decode(got)
		t.Fatalf("checkpoint holds an older state (decoded: %+v, %v); want the one acking 2", st, err)
	}
}

// waitStack waits, counting polls, until a goroutine's stack holds every
// one of frames.
func waitStack(t *testing.T, what string, frames ...string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 200000 {
		all := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(all, "\n\n") {
			ok := true
			for _, f := range frames {
				ok = ok && strings.Contains(g, f)
			}
			if ok {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatalf("no goroutine %s", what)
}
