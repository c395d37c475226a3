package crashtest

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ackChecker fetches from a durable consumer with double acks and notes,
// in its ledger, every stream sequence delivered again after the server
// confirmed its ack.
type ackChecker struct {
	l         *ledger
	mu        sync.Mutex
	confirmed map[uint64]bool // double-acked stream sequences
}

func newAckChecker(l *ledger) *ackChecker {
	return &ackChecker{l: l, confirmed: map[uint64]bool{}}
}

// count is how many acks the server confirmed.
func (a *ackChecker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.confirmed)
}

// consumeUntil fetches and double-acks from stream's durable until stop,
// riding out failovers (errors are retried).
func (a *ackChecker) consumeUntil(stop <-chan struct{}, js jetstream.JetStream, stream, durable string) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := js.Consumer(ctx, stream, durable)
		if err != nil {
			cancel()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		batch, err := c.Fetch(20, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			cancel()
			continue
		}
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			seq := md.Sequence.Stream
			a.mu.Lock()
			again := a.confirmed[seq]
			a.mu.Unlock()
			if again {
				a.l.note("stream sequence %d redelivered after its ack was confirmed", seq)
			}
			if m.DoubleAck(ctx) == nil {
				a.mu.Lock()
				a.confirmed[seq] = true
				a.mu.Unlock()
			}
		}
		cancel()
	}
}
