package consumerstate

import (
	"errors"
	"fmt"
	"slices"
)

// ErrInconsistent is wrapped by Verify's errors: the state breaks one of
// the invariants listed on State.
var ErrInconsistent = errors.New("consumerstate: inconsistent state")

// Verify checks the invariants listed on State and returns an error
// wrapping ErrInconsistent describing the first one broken. It costs
// O(n log n) in the number of pending messages.
func (s *State) Verify() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInconsistent)
	}
	d, f := s.Delivered, s.AckFloor
	if f.Consumer > d.Consumer || f.Stream > d.Stream {
		return bad("ack floor %+v beyond delivered %+v", f, d)
	}
	if len(s.Pending) == 0 && f != d {
		return bad("nothing pending but ack floor %+v differs from delivered %+v", f, d)
	}
	seqs := make([]StreamSeq, 0, len(s.Pending))
	for sseq := range s.Pending {
		seqs = append(seqs, sseq)
	}
	slices.Sort(seqs)
	prev := f.Consumer
	for _, sseq := range seqs {
		p := s.Pending[sseq]
		if sseq <= f.Stream || sseq > d.Stream {
			return bad("pending stream seq %d outside (ack floor %d, delivered %d]", sseq, f.Stream, d.Stream)
		}
		if p.Consumer <= prev || p.Consumer > d.Consumer {
			return bad("pending stream seq %d has consumer seq %d, want in (%d, %d]",
				sseq, p.Consumer, prev, d.Consumer)
		}
		prev = p.Consumer
	}
	for sseq, n := range s.Redelivered {
		if _, ok := s.Pending[sseq]; !ok {
			return bad("redelivery count for stream seq %d, which is not pending", sseq)
		}
		if n == 0 {
			return bad("zero redelivery count for stream seq %d", sseq)
		}
	}
	return nil
}
