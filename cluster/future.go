package cluster

import "github.com/hashicorp/raft"

// awaitFuture waits for f's outcome unless done or abort closes first
// (ErrClosed; a nil channel never does). A future raft has queued but not
// yet taken (an Apply or a Barrier in its apply channel) is never answered
// once raft shuts down, and waiting on it directly would hang a close that
// shuts raft down: the wait runs on a goroutine of its own, which such a
// future leaves blocked, and the caller goes on.
func awaitFuture(f raft.Future, done, abort <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() { errc <- f.Error() }()
	select {
	case err := <-errc:
		return err
	case <-done:
		return ErrClosed
	case <-abort:
		return ErrClosed
	}
}
