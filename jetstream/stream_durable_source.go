package jetstream

import (
	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
)

// Durable sourcing (nats-server 2.14, ADR-60): a mirror or source whose
// config names a consumer ({"consumer": {"name", "deliver_subject"}}) of
// its origin, created beforehand with ack_policy flow_control, instead of
// the consumer the server would make for itself. nats-server feeds the
// mirror through that consumer's deliveries on its deliver subject; jetwal
// copies from the origin's store on the same server (stream_source.go), so
// here the named consumer
//
//   - must exist with ack_policy flow_control, else the feed copies
//     nothing and stream info shows the error (nats-server's 10214/10217
//     for the policy; a missing consumer is 10029/10045 "consumer not
//     found");
//   - selects what is copied (its filter subjects) and where a new feed
//     starts (after its ack floor);
//   - follows the copies: its delivered and ack floor stream sequences
//     move to the last message the feed has read, so its info shows the
//     feed's progress (its consumer sequence does not move).
//
// Nothing is delivered on the deliver subject by the feed.

// durable returns the origin consumer a durable source names (nil for an
// ordinary feed), or the error that keeps the feed from copying.
func (f *feed) durable(origin *stream) (*consumer, *api.ApiError) {
	cs := f.src.Consumer
	if cs == nil {
		return nil, nil
	}
	c := origin.cons.get(cs.Name)
	if c == nil {
		code := api.ErrSourceConsumerSetupFailed
		if f.mirror {
			code = api.ErrMirrorConsumerSetupFailed
		}
		return nil, api.Errorf(code, "consumer %q of stream %q not found", cs.Name, f.src.Name)
	}
	c.mu.Lock()
	policy := c.cfg.AckPolicy
	c.mu.Unlock()
	if policy != api.AckFlowControl {
		if f.mirror {
			return nil, api.NewError(api.ErrMirrorConsumerRequiresAck)
		}
		return nil, api.NewError(api.ErrSourceConsumerRequiresAck)
	}
	return c, nil
}

// takes reports whether the consumer's filters take subj.
func (c *consumer) takes(subj string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.matches(subj)
}

// resumeSeq is the stream sequence after the consumer's ack floor.
func (c *consumer) resumeSeq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var floor uint64
	c.withState(func(st *consumerstate.State) { floor = uint64(st.AckFloor.Stream) })
	return floor + 1
}

// followCopies moves the consumer past what a durable source has read:
// next is the feed's next origin sequence.
func (c *consumer) followCopies(next uint64) {
	c.mu.Lock()
	c.withState(func(st *consumerstate.State) {
		switch {
		case uint64(st.Delivered.Stream) < next-1:
			st.Reset(consumerstate.StreamSeq(next))
		case uint64(st.AckFloor.Stream) < next-1:
			st.AckAll(consumerstate.StreamSeq(next - 1))
		}
	})
	c.mu.Unlock()
}
