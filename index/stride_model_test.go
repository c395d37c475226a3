package index

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// The sequence index against a model: a map of every sequence added (and
// not purged) to its location and to the block it was added into, and the
// set of live ones. The model opens a block as Add does (a new segment, a
// gap, or a full block), so it knows which entries share a block, which
// LookupSpan's next offset and DropDead depend on. Appends are mostly runs
// of one record size, so sealed blocks are mostly in the stride form, with
// runs broken by one odd record, gaps (SkipTo), segment changes and
// irregular offsets mixed in; deletes aim at blocks' first and last entries
// as often as anywhere else.

type modelBlock struct {
	seg  SegID
	base uint64
	n    int
}

type seqModel struct {
	// indexed by sequence, up to next
	added  []Loc   // every entry still in the index, live or not
	blk    []int32 // entry -> index into blocks, -1 if not in the index
	live   []bool
	nlive  int
	blocks []modelBlock // all blocks ever opened; dropped ones have n < 0
	next   uint64       // the next sequence to add
}

func newSeqModel() *seqModel { return &seqModel{next: 1} }

func (m *seqModel) isLive(q uint64) bool { return q < uint64(len(m.live)) && m.live[q] }

// inBlock returns the block holding q, if q is in the index.
func (m *seqModel) inBlock(q uint64) (int, bool) {
	if q >= uint64(len(m.blk)) || m.blk[q] < 0 {
		return 0, false
	}
	return int(m.blk[q]), true
}

func (m *seqModel) del(q uint64) {
	if m.isLive(q) {
		m.live[q] = false
		m.nlive--
	}
}

// add mirrors Seqs.Add's choice between extending the newest block and
// opening another.
func (m *seqModel) add(seq uint64, loc Loc) {
	if k := len(m.blocks) - 1; k < 0 || m.blocks[k].n < 0 || m.blocks[k].seg != loc.Seg ||
		m.blocks[k].base+uint64(m.blocks[k].n) != seq || m.blocks[k].n == maxBlock {
		m.blocks = append(m.blocks, modelBlock{seg: loc.Seg, base: seq})
	}
	k := len(m.blocks) - 1
	m.blocks[k].n++
	for uint64(len(m.added)) <= seq {
		m.added, m.blk, m.live = append(m.added, Loc{}), append(m.blk, -1), append(m.live, false)
	}
	m.added[seq], m.blk[seq], m.live[seq] = loc, int32(k), true
	m.nlive++
	m.next = seq + 1
}

func (m *seqModel) blockLive(k int) int {
	b := m.blocks[k]
	n := 0
	for i := range b.n {
		if m.isLive(b.base + uint64(i)) {
			n++
		}
	}
	return n
}

// dropDead mirrors Seqs.DropDead: every block without a live entry but
// the newest goes, with its entries.
func (m *seqModel) dropDead() {
	newest := -1
	for k := len(m.blocks) - 1; k >= 0; k-- {
		if m.blocks[k].n >= 0 {
			newest = k
			break
		}
	}
	for k, b := range m.blocks {
		if b.n < 0 || k == newest || m.blockLive(k) > 0 {
			continue
		}
		for i := range b.n {
			m.blk[b.base+uint64(i)] = -1
		}
		m.blocks[k].n = -1
	}
}

func (m *seqModel) liveSorted() []uint64 {
	out := make([]uint64, 0, m.nlive)
	for q, l := range m.live {
		if l {
			out = append(out, uint64(q))
		}
	}
	return out
}

// checkSeqs compares x with m in every way the store reads the index.
func checkSeqs(t *testing.T, step int, x *Seqs, m *seqModel, rng *rand.Rand) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d: "+format, append([]any{step}, args...)...)
	}
	if x.Len() != m.nlive {
		fail("Len %d, model %d", x.Len(), m.nlive)
	}
	// Every sequence from 0 to past the end: Lookup, LookupSpan, Live.
	for q := uint64(0); q <= m.next+1; q++ {
		loc, ok := x.Lookup(q)
		var want Loc
		if m.isLive(q) {
			want = m.added[q]
		}
		if ok != m.isLive(q) || ok && loc != want {
			fail("Lookup(%d) = %v %v, model %v %v", q, loc, ok, want, m.isLive(q))
		}
		if x.Live(q) != ok {
			fail("Live(%d) disagrees with Lookup", q)
		}
		sloc, end, hasEnd, sok := x.LookupSpan(q)
		if sok != ok || sloc != loc {
			fail("LookupSpan(%d) = %v %v, Lookup %v %v", q, sloc, sok, loc, ok)
		}
		if !ok {
			continue
		}
		k, inIndex := m.inBlock(q + 1)
		kq, _ := m.inBlock(q)
		sameBlock := inIndex && k == kq
		if hasEnd != sameBlock || hasEnd && end != m.added[q+1].Off {
			fail("LookupSpan(%d) end %d %v, model next in same block %v", q, end, hasEnd, sameBlock)
		}
	}
	// First, Last, and the whole order both ways.
	live := m.liveSorted()
	first, fok := x.First()
	last, lok := x.Last()
	if fok != (len(live) > 0) || lok != fok || fok && (first != live[0] || last != live[len(live)-1]) {
		fail("First %d %v Last %d %v, model %v", first, fok, last, lok, live[:min(len(live), 3)])
	}
	i := 0
	for q, ok := x.Next(0); ok; q, ok = x.Next(q + 1) {
		if i >= len(live) || q != live[i] {
			fail("Next walk: entry %d is %d, model %v", i, q, live[i:min(len(live), i+3)])
		}
		i++
	}
	if i != len(live) {
		fail("Next walk stopped after %d of %d", i, len(live))
	}
	i = len(live) - 1
	for q, ok := x.Prev(^uint64(0)); ok; q, ok = x.Prev(q - 1) {
		if i < 0 || q != live[i] {
			fail("Prev walk: entry %d is %d", i, q)
		}
		i--
		if q == 0 {
			break
		}
	}
	if i != -1 {
		fail("Prev walk stopped with %d left", i+1)
	}
	// Next, Prev and CountFrom from random points, block edges included.
	points := []uint64{0, 1, m.next - 1, m.next, m.next + 1}
	for _, b := range m.blocks {
		if b.n > 0 {
			points = append(points, b.base-1, b.base, b.base+1, b.base+uint64(b.n)-1, b.base+uint64(b.n))
		}
	}
	for range 20 {
		points = append(points, rng.Uint64N(m.next+2))
	}
	for _, p := range points {
		j, _ := slices.BinarySearch(live, p) // first live >= p
		q, ok := x.Next(p)
		if ok != (j < len(live)) || ok && q != live[j] {
			fail("Next(%d) = %d %v", p, q, ok)
		}
		if n := x.CountFrom(p); n != len(live)-j {
			fail("CountFrom(%d) = %d, model %d", p, n, len(live)-j)
		}
		jp, found := slices.BinarySearch(live, p)
		if !found {
			jp-- // last live < p
		}
		q, ok = x.Prev(p)
		if ok != (jp >= 0) || ok && q != live[jp] {
			fail("Prev(%d) = %d %v", p, q, ok)
		}
	}
	// Deleted: every sequence strictly between the first and last live
	// ones that is not live (deleted entries and gaps alike).
	var gotDel []uint64
	x.Deleted(func(q uint64) bool { gotDel = append(gotDel, q); return true })
	var wantDel []uint64
	if len(live) > 0 {
		for q := live[0] + 1; q < live[len(live)-1]; q++ {
			if !m.isLive(q) {
				wantDel = append(wantDel, q)
			}
		}
	}
	if !slices.Equal(gotDel, wantDel) {
		fail("Deleted: %d sequences, model %d", len(gotDel), len(wantDel))
	}
	// Per segment: SegLive, HasSeg, EachInSeg.
	segs := map[SegID]bool{}
	maxSeg := SegID(0)
	for _, b := range m.blocks {
		if b.n >= 0 {
			segs[b.seg] = true
		}
		maxSeg = max(maxSeg, b.seg)
	}
	segLive := map[SegID]int{}
	for q, l := range m.live {
		if l {
			segLive[m.added[q].Seg]++
		}
	}
	for seg := SegID(0); seg <= maxSeg+1; seg++ {
		if x.HasSeg(seg) != segs[seg] {
			fail("HasSeg(%d) = %v", seg, x.HasSeg(seg))
		}
		n := 0
		var prev uint64
		x.EachInSeg(seg, func(q uint64, off uint32) {
			if !m.isLive(q) || m.added[q] != (Loc{Seg: seg, Off: off}) || n > 0 && q <= prev {
				fail("EachInSeg(%d): %d at %d", seg, q, off)
			}
			prev = q
			n++
		})
		want := segLive[seg]
		if n != want || x.SegLive(seg) != want {
			fail("segment %d: EachInSeg %d, SegLive %d, model %d", seg, n, x.SegLive(seg), want)
		}
	}
	// The blocks are the model's, and a sealed block whose offsets all lie
	// one distance apart is in the stride form.
	var mb []modelBlock
	for _, b := range m.blocks {
		if b.n >= 0 {
			mb = append(mb, b)
		}
	}
	if len(mb) != len(x.blocks) {
		fail("%d blocks, model %d", len(x.blocks), len(mb))
	}
	for k, b := range x.blocks {
		if b.seg != mb[k].seg || b.base != mb[k].base || b.n != mb[k].n {
			fail("block %d: seg %d base %d n %d, model %+v", k, b.seg, b.base, b.n, mb[k])
		}
		if k == len(x.blocks)-1 {
			if b.offs == nil {
				fail("newest block is packed")
			}
			continue
		}
		offs := make([]uint32, b.n)
		for i := range offs {
			offs[i] = m.added[b.base+uint64(i)].Off
		}
		if _, _, uniform := packStride(offs); uniform != (b.form() == formStride) {
			fail("block %d of %d entries: form %d, uniform offsets %v", k, b.n, b.form(), uniform)
		}
	}
}

// roundTrip encodes x and decodes it (copied or in place), or encodes it
// placed and repoints it at the encoding, and checks that the result
// encodes to the same bytes.
func roundTrip(t *testing.T, x *Seqs, rng *rand.Rand) *Seqs {
	t.Helper()
	full := &Index{Seqs: *x, Subj: NewSubjects()}
	switch rng.IntN(3) {
	case 0, 1:
		enc := Encode(full, nil)
		decode := Decode
		if rng.IntN(2) == 0 {
			decode = DecodeInPlace
		}
		y, _, err := decode("model", alignedCopy(enc))
		if err != nil {
			t.Fatal(err)
		}
		if again := Encode(y, nil); !bytes.Equal(again, enc) {
			t.Fatal("decoded index encodes differently")
		}
		return &y.Seqs
	default:
		var buf bytes.Buffer
		if _, place, err := EncodeToPlaced(&buf, full, nil); err != nil {
			t.Fatal(err)
		} else if b := alignedCopy(buf.Bytes()); !full.Seqs.Repoint(place, b) && littleEndian {
			t.Fatal("Repoint refused the bytes it was encoded to")
		}
		if again := Encode(full, nil); !bytes.Equal(again, buf.Bytes()) {
			t.Fatal("repointed index encodes differently")
		}
		return &full.Seqs
	}
}

func TestSeqsAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		x := &Seqs{}
		m := newSeqModel()
		seg := SegID(1)
		off := uint32(32)
		for step := range 160 {
			switch op := rng.IntN(20); {
			case op < 7: // a run of appends, mostly of one size
				size := []uint32{48, 170, 300, 4000, 70000}[rng.IntN(5)]
				n := 1 + rng.IntN(3*maxBlock/2)
				if rng.IntN(3) == 0 {
					n = 1 + rng.IntN(3)
				}
				odd := -1 // one record of another size in the middle
				if rng.IntN(3) == 0 {
					odd = rng.IntN(n)
				}
				jitter := rng.IntN(6) == 0 // non-message records between
				for i := range n {
					if off > 1<<31 {
						seg, off = seg+1, 32
					}
					x.Add(m.next, Loc{Seg: seg, Off: off})
					m.add(m.next, Loc{Seg: seg, Off: off})
					off += size
					if i == odd {
						off += 1 + uint32(rng.IntN(40))
					}
					if jitter {
						off += uint32(rng.IntN(30))
					}
				}
			case op < 8: // SkipTo: a gap
				m.next += 1 + uint64(rng.IntN(2*maxBlock))
			case op < 9: // the next segment
				seg, off = seg+1, 32
			case op < 13: // single deletes, at block edges and anywhere
				for range 1 + rng.IntN(200) {
					var q uint64
					live := len(m.blocks) > 0
					switch {
					case !live:
						q = rng.Uint64N(m.next + 1)
					case rng.IntN(3) == 0:
						b := m.blocks[rng.IntN(len(m.blocks))]
						q = b.base
						if rng.IntN(2) == 0 && b.n > 0 {
							q += uint64(b.n - 1)
						}
					default:
						q = rng.Uint64N(m.next + 1)
					}
					want := m.isLive(q)
					if got := x.Delete(q); got != want {
						t.Fatalf("step %d: Delete(%d) = %v, model %v", step, q, got, want)
					}
					m.del(q)
				}
			case op < 14: // delete a run (an interest-policy burst of acks)
				from := rng.Uint64N(m.next + 1)
				for q := from; q < from+uint64(rng.IntN(3*maxBlock)); q++ {
					if x.Delete(q) != m.isLive(q) {
						t.Fatalf("step %d: Delete(%d) disagrees", step, q)
					}
					m.del(q)
				}
			case op < 15: // Truncate above a point
				to := rng.Uint64N(m.next + 1)
				for q, ok := x.Next(to + 1); ok; q, ok = x.Next(q + 1) {
					x.Delete(q)
					m.del(q)
				}
			case op < 16: // Compact below a point, and drop the dead blocks
				to := rng.Uint64N(m.next + 1)
				for q, ok := x.Next(1); ok && q < to; q, ok = x.Next(q + 1) {
					x.Delete(q)
					m.del(q)
				}
				x.DropDead()
				m.dropDead()
			case op < 17:
				x.DropDead()
				m.dropDead()
			case op < 19:
				x = roundTrip(t, x, rng)
			default:
				if rng.IntN(4) == 0 { // purge everything
					next := m.next
					x, m = &Seqs{}, newSeqModel()
					m.next = next
				}
			}
			checkSeqs(t, step, x, m, rng)
		}
	}
}
