package consumerstate

// pendingEntry is one pending message with its stream sequence, for
// encoding in stream order.
type pendingEntry struct {
	sseq StreamSeq
	p    Pending
}

// radixBits is the digit size of sortPending's radix sort.
const radixBits = 11

// sortedPending returns the pending messages of s in ascending stream
// order, using buf and tmp as scratch (either may be nil).
//
// Encoding a snapshot walks all pending messages in order. Looking each up
// in the map from the order index costs a cache miss per entry; reading the
// map sequentially and radix sorting the copies (keys relative to the ack
// floor, so 2 passes cover a span of 4M sequences) is several times faster.
func sortedPending(s *State, buf, tmp []pendingEntry) ([]pendingEntry, []pendingEntry) {
	n := len(s.Pending)
	buf = grow(buf, n)
	tmp = grow(tmp, n)
	base := s.AckFloor.Stream
	var span StreamSeq
	i := 0
	for k, v := range s.Pending {
		buf[i] = pendingEntry{sseq: k, p: v}
		span |= k - base
		i++
	}
	const buckets = 1 << radixBits
	var count [buckets]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += radixBits {
		clear(count[:])
		for j := range buf {
			count[(buf[j].sseq-base)>>shift&(buckets-1)]++
		}
		sum := 0
		for d := range count {
			sum, count[d] = sum+count[d], sum
		}
		for j := range buf {
			d := (buf[j].sseq - base) >> shift & (buckets - 1)
			tmp[count[d]] = buf[j]
			count[d]++
		}
		buf, tmp = tmp, buf
	}
	return buf, tmp
}

func grow(b []pendingEntry, n int) []pendingEntry {
	if cap(b) < n {
		return make([]pendingEntry, n)
	}
	return b[:n]
}

// sortedSeqs returns the pending stream sequences of s in ascending order,
// built in buf with tmp as scratch: a sequential read of the map and a
// radix sort, much cheaper than a map lookup per entry.
func sortedSeqs(s *State, buf, tmp []StreamSeq) ([]StreamSeq, []StreamSeq) {
	n := len(s.Pending)
	buf = growSeqs(buf, n)
	tmp = growSeqs(tmp, n)
	base := s.AckFloor.Stream
	var span StreamSeq
	i := 0
	for k := range s.Pending {
		buf[i] = k
		span |= k - base
		i++
	}
	const buckets = 1 << radixBits
	var count [buckets]int
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += radixBits {
		clear(count[:])
		for _, k := range buf {
			count[(k-base)>>shift&(buckets-1)]++
		}
		sum := 0
		for d := range count {
			sum, count[d] = sum+count[d], sum
		}
		for _, k := range buf {
			d := (k - base) >> shift & (buckets - 1)
			tmp[count[d]] = k
			count[d]++
		}
		buf, tmp = tmp, buf
	}
	return buf, tmp
}

func growSeqs(b []StreamSeq, n int) []StreamSeq {
	if cap(b) < n {
		return make([]StreamSeq, n, n+n/4)
	}
	return b[:n]
}
