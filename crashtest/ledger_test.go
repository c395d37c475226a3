package crashtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ledger records what a cluster acknowledged, from several publishers,
// and the problems the checks find.
type ledger struct {
	mu       sync.Mutex
	acked    map[uint64]string // sequence → body
	problems []string
	outage   time.Duration // the longest a publisher went without an ack
}

func newLedger() *ledger { return &ledger{acked: map[uint64]string{}} }

func (l *ledger) note(format string, args ...any) {
	l.mu.Lock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// count is how many sequences were acknowledged.
func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// longestOutage is the longest a publisher went from a failed publish to
// its next acknowledged one.
func (l *ledger) longestOutage() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.outage
}

// last is the highest acknowledged sequence.
func (l *ledger) last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var q uint64
	for s := range l.acked {
		q = max(q, s)
	}
	return q
}

// publishUntil publishes "<tag>-<i>" (also its message id) on subj until
// stop, recording each acknowledgement; a sequence acknowledged for two
// bodies is a problem. A failed publish may or may not be stored and is
// not recorded; the publisher waits pause before the next. The longest
// time from a failed publish to the next acknowledged one is the ledger's
// outage, and one still going on at stop counts up to then.
func (l *ledger) publishUntil(stop <-chan struct{}, js jetstream.JetStream, subj, tag string, timeout, pause time.Duration) {
	var failingSince time.Time
	for i := 0; ; i++ {
		select {
		case <-stop:
			if !failingSince.IsZero() {
				l.mu.Lock()
				l.outage = max(l.outage, time.Since(failingSince))
				l.mu.Unlock()
			}
			return
		default:
		}
		start := time.Now()
		body := fmt.Sprintf("%s-%d", tag, i)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		ack, err := js.Publish(ctx, subj, []byte(body), jetstream.WithMsgID(body))
		cancel()
		if err != nil {
			if failingSince.IsZero() {
				failingSince = start
			}
			time.Sleep(pause)
			continue
		}
		l.mu.Lock()
		if !failingSince.IsZero() {
			l.outage = max(l.outage, time.Since(failingSince))
			failingSince = time.Time{}
		}
		if old, ok := l.acked[ack.Sequence]; ok && old != body {
			l.problems = append(l.problems, fmt.Sprintf("sequence %d acknowledged for %q and %q", ack.Sequence, old, body))
		}
		l.acked[ack.Sequence] = body
		l.mu.Unlock()
	}
}

// verify reads every acknowledged message back from stream and notes the
// ones lost or changed.
func (l *ledger) verify(try func(string, func(context.Context) error), js jetstream.JetStream, stream string) {
	var s jetstream.Stream
	try("stream", func(ctx context.Context) error {
		var err error
		s, err = js.Stream(ctx, stream)
		return err
	})
	l.mu.Lock()
	want := make(map[uint64]string, len(l.acked))
	for q, b := range l.acked {
		want[q] = b
	}
	l.mu.Unlock()
	for q, body := range want {
		var got *jetstream.RawStreamMsg
		try(fmt.Sprintf("get %d", q), func(ctx context.Context) error {
			var err error
			got, err = s.GetMsg(ctx, q)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				l.note("acknowledged message %d lost", q)
				return nil
			}
			return err
		})
		if got != nil && string(got.Data) != body {
			l.note("message %d is %q, acknowledged as %q", q, got.Data, body)
		}
	}
}

// failures returns the problems found so far, summarized, or "".
func (l *ledger) failures() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.problems) == 0 {
		return ""
	}
	return fmt.Sprintf("%d problems: %s", len(l.problems), summarize(l.problems))
}
