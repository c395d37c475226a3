package index

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The checkpoint's subject section (layout in doc.go): per subject its name, summary and sequence list. A subject of
// one or two messages keeps no list in memory; it is written as the list
// its messages would make (First, then Last), and read back without one.

// shortList is the encoded list of a subject without a list: n entries, the
// varint delta of Last from First when there are two.
func shortList(e *entry) (n int, buf []byte) {
	if e.first == e.last {
		return 1, nil
	}
	return 2, binary.AppendUvarint(nil, e.last-e.first)
}

// pad4 is the number of zero bytes that bring n to a multiple of 4.
func pad4(n int) int { return -n & 3 }

var zeros [4]byte

func (x *Subjects) encodedSize() int {
	n := 4
	x.each(func(id uint32) {
		e := x.ent(id)
		name := refLen(e.name)
		n += 4 + name + pad4(name) + 8*3 + 8 + 8 + 4 + 4
		if e.list == 0 {
			_, buf := shortList(e)
			n += 16 + len(buf) + pad4(len(buf))
			return
		}
		l := x.lists.at(e.list - 1)
		n += 16*len(l.marks) + len(l.buf) + pad4(len(l.buf))
	})
	return n
}

// encode writes the subject section in the version-2 layout (doc.go).
func (x *Subjects) encode(enc *encoder) {
	enc.u32(uint32(x.Len()))
	x.each(func(id uint32) {
		e := x.ent(id)
		name := x.nameOf(e)
		enc.u16(uint16(len(name)))
		enc.u16(0)
		enc.bytes(name)
		enc.bytes(zeros[:pad4(len(name))])
		enc.u64(x.count(id, e))
		enc.u64(e.first)
		enc.u64(e.last)
		if e.list == 0 {
			n, buf := shortList(e)
			enc.u64(uint64(n))
			enc.u64(e.last)
			enc.u32(1)
			enc.u64(e.first)
			enc.u32(0)
			enc.u32(uint32(n))
			enc.u32(uint32(len(buf)))
			enc.bytes(buf)
			enc.bytes(zeros[:pad4(len(buf))])
			return
		}
		l := x.lists.at(e.list - 1)
		enc.u64(uint64(l.n))
		enc.u64(l.last)
		enc.u32(uint32(len(l.marks)))
		for _, m := range l.marks {
			enc.u64(m.seq)
			enc.u32(m.off)
			enc.u32(m.n)
		}
		enc.u32(uint32(len(l.buf)))
		enc.bytes(l.buf)
		enc.bytes(zeros[:pad4(len(l.buf))])
	})
}

// decode reads the subject section of a checkpoint of the given version
// into x (empty). A short read is left in r.err for the caller;
// inconsistent entries are returned as errors.
func (x *Subjects) decode(r *reader, version byte) error {
	if version == 1 {
		return x.decodeV1(r)
	}
	ns := r.count(4)
	for i := 0; i < ns && r.err == nil; i++ {
		nl := int(r.u16())
		r.u16()
		name := r.take(nl)
		r.take(pad4(nl))
		msgs, first, last := r.u64(), r.u64(), r.u64()
		var l seqList
		total := r.u64()
		l.last = r.u64()
		nm := r.count(16)
		l.marks = make([]listMark, nm)
		for j := range l.marks {
			l.marks[j] = listMark{seq: r.u64(), off: r.u32(), n: r.u32()}
		}
		nb := r.count(1)
		l.buf = append([]byte(nil), r.take(nb)...)
		r.take(pad4(nb))
		if r.err != nil {
			return nil
		}
		if msgs == 0 || nm == 0 || first > last || total>>62 != 0 {
			return fmt.Errorf("inconsistent subject entry %s", name)
		}
		l.n = int(total)
		if err := checkDecoded(name, msgs, first, last, &l); err != nil {
			return err
		}
		if err := x.load(name, msgs, first, last, l); err != nil {
			return err
		}
	}
	return nil
}

// checkDecoded checks a subject entry and its list as a decoder read them:
// the list's marks, a walk of its entries, then the entry against them.
func checkDecoded(name []byte, msgs, first, last uint64, l *seqList) error {
	if err := l.check(); err != nil {
		return fmt.Errorf("subject %s: %v", name, err)
	}
	if err := l.walk(); err != nil {
		return fmt.Errorf("subject %s: %v", name, err)
	}
	return checkEntry(name, msgs, first, last, l)
}

// check verifies what the list's walks rely on: marks in order, offsets in
// buf, counts that add up, a mark with varints holding at most listBlock.
func (l *seqList) check() error {
	var sum uint64
	for j, m := range l.marks {
		if int(m.off) > len(l.buf) || m.n == 0 {
			return fmt.Errorf("list mark %d out of range", j)
		}
		if j > 0 && (m.off < l.marks[j-1].off || m.seq <= l.marks[j-1].seq) {
			return fmt.Errorf("list mark %d out of order", j)
		}
		if !l.run(j) && m.n > listBlock {
			return fmt.Errorf("list mark %d holds %d entries", j, m.n)
		}
		sum += uint64(m.n)
	}
	if sum != uint64(l.n) {
		return fmt.Errorf("list marks hold %d entries, list says %d", sum, l.n)
	}
	return nil
}

// decodeV1 reads the version-1 subject section: marks without counts, each
// of listBlock entries but the last; runs are merged into the version-2
// form as they are read.
func (x *Subjects) decodeV1(r *reader) error {
	ns := r.count(2)
	for i := 0; i < ns && r.err == nil; i++ {
		name := r.take(int(r.u16()))
		msgs, first, last := r.u64(), r.u64(), r.u64()
		var l seqList
		l.n = int(r.u32())
		l.last = r.u64()
		nm := r.count(12)
		l.marks = make([]listMark, nm)
		for j := range l.marks {
			l.marks[j] = listMark{seq: r.u64(), off: r.u32(), n: uint32(min(listBlock, l.n-j*listBlock))}
		}
		l.buf = append([]byte(nil), r.take(r.count(1))...)
		if r.err != nil {
			return nil
		}
		if msgs == 0 || nm == 0 || (l.n+listBlock-1)/listBlock != nm || first > last {
			return fmt.Errorf("inconsistent subject entry %s", name)
		}
		if err := checkDecoded(name, msgs, first, last, &l); err != nil {
			return err
		}
		l.mergeRuns()
		if err := x.load(name, msgs, first, last, l); err != nil {
			return err
		}
	}
	return nil
}

// mergeRuns brings a list read from a version-1 checkpoint (a mark per
// listBlock entries) to the form add makes: adjacent runs that continue
// each other become one mark, and a last mark of consecutive deltas that
// continues a run joins it (add extends a run rather than start a block).
func (l *seqList) mergeRuns() {
	out := l.marks[:0]
	for j, m := range l.marks {
		isRun := l.run(j)
		if k := len(out) - 1; k >= 0 && isRun && out[k].n > 1 && int(out[k].off) == int(m.off) &&
			out[k].seq+uint64(out[k].n) == m.seq && uint64(out[k].n)+uint64(m.n) <= math.MaxUint32 {
			out[k].n += m.n
			continue
		}
		out = append(out, m)
	}
	l.marks = out
	k := len(l.marks) - 1
	if k < 1 || l.run(k) || !l.run(k-1) {
		return
	}
	p, m := &l.marks[k-1], l.marks[k]
	if p.seq+uint64(p.n) != m.seq || uint64(p.n)+uint64(m.n) > math.MaxUint32 {
		return
	}
	for _, b := range l.buf[m.off:] {
		if b != 1 {
			return
		}
	}
	if len(l.buf)-int(m.off) != int(m.n)-1 {
		return
	}
	l.buf = l.buf[:m.off]
	p.n += m.n
	l.marks = l.marks[:k]
}

// load adds a subject read from a checkpoint; a subject of at most two
// messages drops its list.
func (x *Subjects) load(name []byte, msgs, first, last uint64, l seqList) error {
	h := x.hashBytes(name)
	if _, _, ok := find(x, name, h); ok {
		return fmt.Errorf("duplicate subject %s", name)
	}
	if x.tab.full() {
		x.grow()
	}
	_, slot, _ := find(x, name, h)
	id := x.insert(slot, h, putName(&x.names, name), first)
	e := x.ent(id)
	e.last, e.msgs = last, uint32(msgs)
	if msgs>>32 != 0 {
		x.overAdd(id, int64(msgs>>32))
	}
	if msgs > 2 {
		lid := x.newList()
		*x.lists.at(lid) = l
		e.list = lid + 1
	}
	x.untouch()
	return nil
}
