package jetstream

import (
	"context"
	"errors"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestDoubleAckOnClosedConsumerNotConfirmed: an ack that finds its consumer
// closed between the lookup and the apply (deleted, or its replicated
// stream's leadership moved to another server) changes nothing, so it must
// not be confirmed. Found by the rolling restart: a leader in lame duck
// mode confirmed acks its closed consumer had dropped, and the next leader
// redelivered them.
func TestDoubleAckOnClosedConsumerNotConfirmed(t *testing.T) {
	ts := startServer(t, Config{})
	js, _ := njs.New(ts.connect())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := fetchFromNewDurable(ctx, t, js, 1)[0]
	// Close the consumer as a lost leadership does, leaving it registered:
	// the window in which an ack finds it and then finds it closed.
	con := ts.js.lookup("A").cons.get("D")
	if con == nil {
		t.Fatal("consumer D not found")
	}
	con.shutdown(false)
	actx, acancel := context.WithTimeout(ctx, 3*time.Second)
	defer acancel()
	if err := m.DoubleAck(actx); err == nil {
		t.Fatal("double ack to a closed consumer was confirmed")
	}
}

// TestCheckpointOfClosedConsumerRefused: the checkpoint that confirms an
// ack of a replicated stream's consumer fails once the consumer is closed,
// rather than succeeding with nothing to write.
func TestCheckpointOfClosedConsumerRefused(t *testing.T) {
	ts := startServer(t, Config{})
	request(t, ts.connect(), "$JS.API.STREAM.CREATE.A", `{"name":"A","subjects":["a.>"]}`)
	s := ts.js.lookup("A")
	c := newConsumer(s, "D", api.ConsumerConfig{Durable: "D", AckPolicy: api.AckExplicit}, time.Now(), nil)
	if _, durable, err := c.checkpointState(); !durable || err != nil {
		t.Fatalf("open durable consumer: durable %v, err %v", durable, err)
	}
	c.shutdown(false)
	if _, _, err := c.checkpointState(); !errors.Is(err, errNotLeader) {
		t.Fatalf("closed durable consumer: err %v, want errNotLeader", err)
	}
}
