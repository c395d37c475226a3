package memstore

// blockSize is the number of entries per ring block.
const blockSize = 1024

type block [blockSize]entry

// ring is a deque of entries kept in fixed-size blocks. Growing it never
// copies entries, and the garbage collector never has to deal with one huge
// array of pointers (appending to such an array while the collector runs
// costs microseconds per message).
type ring struct {
	blocks []*block
	off    int    // slot of the first entry within blocks[0]
	n      int    // number of entries
	spare  *block // one emptied, zeroed block kept for reuse
}

func (r *ring) len() int { return r.n }

// at returns entry i, 0 <= i < len.
func (r *ring) at(i int) *entry {
	j := r.off + i
	return &r.blocks[j/blockSize][j%blockSize]
}

func (r *ring) front() *entry { return r.at(0) }
func (r *ring) back() *entry  { return r.at(r.n - 1) }

// push appends e at the back.
func (r *ring) push(e entry) {
	j := r.off + r.n
	if j/blockSize == len(r.blocks) {
		b := r.spare
		r.spare = nil
		if b == nil {
			b = new(block)
		}
		r.blocks = append(r.blocks, b)
	}
	r.blocks[j/blockSize][j%blockSize] = e
	r.n++
}

// popFront removes the first entry.
func (r *ring) popFront() {
	*r.front() = entry{}
	r.n--
	r.off++
	if r.n == 0 {
		r.reset()
		return
	}
	if r.off == blockSize {
		r.spare = r.blocks[0]
		r.blocks[0] = nil
		r.blocks = r.blocks[1:]
		r.off = 0
	}
}

// popBack removes the last entry.
func (r *ring) popBack() {
	*r.back() = entry{}
	r.n--
	if r.n == 0 {
		r.reset()
		return
	}
	if used := (r.off+r.n-1)/blockSize + 1; used < len(r.blocks) {
		r.spare = r.blocks[used]
		r.blocks[used] = nil
		r.blocks = r.blocks[:used]
	}
}

// reset empties the ring, keeping one block for reuse if it is clean.
func (r *ring) reset() {
	if r.n == 0 && len(r.blocks) > 0 && r.spare == nil {
		// Every slot of a block was zeroed as it was popped.
		r.spare = r.blocks[0]
	}
	r.blocks = nil
	r.off, r.n = 0, 0
}
