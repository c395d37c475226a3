package consumerstate_test

import (
	"fmt"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/vfs"
)

// The JetStream layer keeps one Store per stream and one Consumer per
// durable consumer; it changes state through Update and, under sync
// "always", calls Flush before confirming an ack the client asked to have
// confirmed.
func Example() {
	st, err := consumerstate.Open("/streams/ORDERS/obs", consumerstate.Options{
		FS:   vfs.NewMemFS(),
		Sync: consumerstate.SyncAlways(),
	})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	c, err := st.Create("worker", []byte(`{"durable_name":"worker","ack_policy":"explicit"}`))
	if err != nil {
		panic(err)
	}
	c.Update(func(s *consumerstate.State) {
		for sseq := consumerstate.StreamSeq(1); sseq <= 3; sseq++ {
			s.Deliver(sseq, 1, 1_700_000_000_000_000_000)
		}
		s.Ack(2)                                   // out of order: the floor stays
		s.Deliver(1, 2, 1_700_000_000_500_000_000) // redelivery of 1
		s.Ack(1)                                   // the floor passes 1 and 2
	})
	if err := c.Flush(); err != nil { // the acks are on disk now
		panic(err)
	}
	snap := c.Snapshot()
	fmt.Printf("delivered %+v, ack floor %+v, pending %d\n", snap.Delivered, snap.AckFloor, snap.NumPending())
	// Output: delivered {Consumer:4 Stream:3}, ack floor {Consumer:2 Stream:2}, pending 1
}
