package proc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pollInterval is how often readiness is re-checked.
const pollInterval = 10 * time.Millisecond

// errExited reports a process that died while we waited for it.
var errExited = errors.New("process exited")

// waitReady polls url until a JetStream account info request succeeds, the
// process exits (done closes) or ctx ends.
func waitReady(ctx context.Context, url string, done <-chan struct{}) error {
	var last error
	for {
		select {
		case <-done:
			return errExited
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
		default:
		}
		if last = probe(ctx, url); last == nil {
			return nil
		}
		select {
		case <-done:
			return errExited
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

// probe connects once and asks for JetStream account info.
func probe(ctx context.Context, url string) error {
	nc, err := nats.Connect(url, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = js.AccountInfo(c)
	return err
}
