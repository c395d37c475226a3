package workload

import (
	"context"
	"fmt"
)

// SmallStreams creates n file streams SMALL0000.. and stores one message
// of size bytes in each: the shape of many small KV buckets or work queues,
// where what a stream costs when nearly empty dominates.
func SmallStreams(ctx context.Context, url string, n, size int) error {
	nc, js, err := connectJS(url, "admin")
	if err != nil {
		return err
	}
	defer nc.Close()
	data := payload(size)
	for i := range n {
		name, subj := fmt.Sprintf("SMALL%04d", i), fmt.Sprintf("small.%04d", i)
		actx, cancel := apiCtx(ctx)
		_, err := js.CreateStream(actx, StreamConfig(name, subj))
		if err == nil {
			_, err = js.Publish(actx, subj, data)
		}
		cancel()
		if err != nil {
			return fmt.Errorf("workload: small stream %s: %w", name, err)
		}
	}
	return nil
}
